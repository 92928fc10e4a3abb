"""Wine 8's gaps, patched in the Windows lane's embeddable CPython only (never in Keeper).

- ``platform.system()`` (hypothesis calls it at import) aborts the process through ``_wmi``: Wine
  lacks ``propsys.VariantToString``. Without ``_wmi``, ``platform`` falls back as Windows without
  WMI does.
- ``shutil.copy2`` aborts through ``_winapi.CopyFile2``, missing in Wine 8: without it shutil
  falls back to copyfile and copystat, as on older Windows.
"""

from __future__ import annotations

import _winapi
import sys

sys.modules["_wmi"] = None  # type: ignore[assignment]
if hasattr(_winapi, "CopyFile2"):
    del _winapi.CopyFile2
