/* keeper.exe: Keeper's launcher on Windows, the twin of bin/keeper (read that first).
 *
 * Claude Code runs every hook in exec form, "${CLAUDE_PLUGIN_ROOT}/bin/keeper" with args
 * ["hook", EVENT], and on Windows it resolves that extensionless path to this file, bin/keeper.exe:
 * Claude Code 2.1.330 spawns exec-form hooks with child_process.spawn and no shell, and its runtime
 * (Bun 1.4.4, src/which.zig) tries an absolute path without extension as .exe, then .cmd, then .bat,
 * never as it is and without PATHEXT. bin/keeper (the sh script) is for Linux, macOS and Git Bash.
 * PowerShell (the Bash tool without Git Bash) finds it on PATH as `keeper` too. A PostToolUse with
 * no save request due is answered here, without Python (see "a tool use counted without Python"), as are
 * a Stop with nothing new and a prompt with nothing to recall that Keeper's records vouch for.
 * Otherwise it runs, in order:
 *   1. the Python environment Keeper set up for exactly this code in CLAUDE_PLUGIN_DATA (env\<version>-
 *      <digest>, the digest read from bin\keeper.digest), isolated (-I), and for a hook without
 *      the site module (-S), given its site-packages; one that cannot import Keeper exits 75 and is
 *      set up again;
 *   2. else a keeper.exe on PATH (pip, pipx, uv), never itself, never in a loop; a hook on the python.exe
 *      of its virtual environment as in 1 where that holds this version and its dependencies;
 *   3. else the one-time set-up with a real Python (the py launcher, then python.exe on PATH, never
 *      one under WindowsApps, never one that fails to read a real file): detached for a hook, which
 *      answers at once, in the foreground for a command such as `keeper save`. A session start after
 *      an update waits while the set-up copies the earlier environment (a second), then runs it.
 * Arguments are re-quoted one by one for the child's command line; stdin, stdout and stderr are the
 * child's own (inherited handles, nothing copied; only a payload the counting path read is given back
 * through a pipe, then the rest of stdin); the exit code is the child's. Windows API only
 * (kernel32), wide characters throughout, no C runtime: build with launcher/build.sh. */

#define _WIN32_WINNT 0x0601 /* Windows 7: PROC_THREAD_ATTRIBUTE_HANDLE_LIST */
#include <windows.h>

/* The one place for the version and for the Python paths this file names (keep in step with
 * bin/keeper; a test checks the version against keeper/__init__.py). */
#define KEEPER_VERSION L"0.4.0"
#define KEEPER_BOOTSTRAP L"keeper\\plugin\\bootstrap.py" /* the set-up script, relative to the plugin folder */
#define KEEPER_DIGEST L"bin\\keeper.digest"  /* the package digest, relative to the plugin folder */
#define KEEPER_READY L"keeper-env.json"    /* inside a finished environment */
#define NO_KEEPER 75 /* the exit code of an environment that cannot import Keeper */
#define KEEPER_CLI_IMPORT \
    L"try: from keeper.cli import main\nexcept ImportError: raise SystemExit(75)\nraise SystemExit(main())"
#define KEEPER_HOOK_IMPORT                                                                     \
    L"try: from keeper.hooks.entry import main\nexcept ImportError: raise SystemExit(75)\n" \
    L"main(sys.argv[2:])"

#define ADD_SITE L"import sys; sys.path.append(sys.argv.pop(1))\n"
static const WCHAR CODE_MAIN[] = KEEPER_CLI_IMPORT;
static const WCHAR CODE_BARE[] = ADD_SITE KEEPER_CLI_IMPORT;
static const WCHAR CODE_HOOK[] = ADD_SITE KEEPER_HOOK_IMPORT;
/* A real Python prints the size of the file it was asked to read; the Store's stub cannot. */
static const WCHAR CODE_PROBE[] =
    L"import sys; sys.stdout.write(str(sys.version_info >= (3, 9) and len(open(sys.argv[1], 'rb').read())))";

static const char MSG_SETTING_UP[] =
    "{\"systemMessage\": \"Keeper is setting itself up (one time, about a minute); once ready it counts and "
    "saves all the work of this session, what was done meanwhile included, and your next session starts with it.\"}";
static const char MSG_NO_PYTHON[] =
    "{\"systemMessage\": \"Keeper needs Python 3.9 or newer, and none was found on PATH (the Microsoft Store's "
    "python.exe alias does not count). Install it from python.org or with `winget install Python.Python.3.13`, "
    "then start a new session.\"}";
static const char MSG_NO_DATA[] =
    "{\"systemMessage\": \"Keeper cannot set itself up: Claude Code gave it no CLAUDE_PLUGIN_DATA folder. "
    "Reinstall the plugin, or install Keeper with pipx (see its README).\"}";
static const char ERR_NO_PYTHON[] =
    "keeper: error: Keeper needs Python 3.9 or newer and none was found on PATH; install it from python.org or "
    "with `winget install Python.Python.3.13`, then run this again.\r\n";

/* The compiler may call these for struct copies and zeroing; there is no C runtime to provide them. */
void *memset(void *dst, int c, size_t n) {
    unsigned char *d = dst;
    while (n--) *d++ = (unsigned char)c;
    return dst;
}
void *memcpy(void *dst, const void *src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--) *d++ = *s++;
    return dst;
}

/* ---- strings: heap-allocated, never freed (the process is short-lived) ---- */

typedef struct {
    WCHAR *p;
    size_t n, cap;
} Buf;

static void *alloc(size_t bytes) {
    void *p = HeapAlloc(GetProcessHeap(), HEAP_ZERO_MEMORY, bytes);
    if (!p) ExitProcess(70);
    return p;
}

static size_t wlen(const WCHAR *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

static void add_n(Buf *b, const WCHAR *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        WCHAR *p = alloc(cap * sizeof(WCHAR));
        if (b->p) memcpy(p, b->p, b->n * sizeof(WCHAR));
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->n, s, n * sizeof(WCHAR));
    b->n += n;
    b->p[b->n] = 0;
}
static void add(Buf *b, const WCHAR *s) { add_n(b, s, wlen(s)); }
static void add_c(Buf *b, WCHAR c) { add_n(b, &c, 1); }

static WCHAR *cat3(const WCHAR *a, const WCHAR *b, const WCHAR *c) {
    Buf out = {0};
    add(&out, a), add(&out, b), add(&out, c);
    return out.p;
}
static WCHAR *path_join(const WCHAR *dir, const WCHAR *name) { return cat3(dir, L"\\", name); }

static WCHAR lower(WCHAR c) { return c >= L'A' && c <= L'Z' ? c + 32 : c; }

static int same_text(const WCHAR *a, const WCHAR *b) { /* case-insensitive (ASCII), '/' == '\' */
    for (;; a++, b++) {
        WCHAR x = *a == L'/' ? L'\\' : lower(*a), y = *b == L'/' ? L'\\' : lower(*b);
        if (x != y) return 0;
        if (!x) return 1;
    }
}

static int contains_text(const WCHAR *hay, const WCHAR *needle) { /* case-insensitive (ASCII) */
    size_t n = wlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && lower(hay[i]) == lower(needle[i])) i++;
        if (i == n) return 1;
    }
    return 0;
}

static WCHAR *parent(const WCHAR *path) { /* the folder holding path, or NULL */
    size_t n = wlen(path);
    while (n > 0 && path[n - 1] != L'\\' && path[n - 1] != L'/') n--;
    if (n == 0) return NULL;
    Buf out = {0};
    add_n(&out, path, n - 1);
    return out.p;
}

static const WCHAR *base_name(const WCHAR *path) {
    const WCHAR *name = path;
    for (; *path; path++)
        if (*path == L'\\' || *path == L'/') name = path + 1;
    return name;
}

/* ---- the environment, the file system ---- */

static WCHAR *env(const WCHAR *name) { /* NULL when unset or empty, as ${NAME:-} */
    DWORD n = GetEnvironmentVariableW(name, NULL, 0);
    if (n <= 1) return NULL;
    WCHAR *value = alloc(n * sizeof(WCHAR));
    if (GetEnvironmentVariableW(name, value, n) + 1 != n) return NULL;
    return value;
}

static int is_file(const WCHAR *path) {
    DWORD a = GetFileAttributesW(path);
    return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}
static int is_dir(const WCHAR *path) {
    DWORD a = GetFileAttributesW(path);
    return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY);
}

static WCHAR *own_path(void) {
    for (DWORD cap = 512;; cap *= 2) {
        WCHAR *p = alloc(cap * sizeof(WCHAR));
        DWORD n = GetModuleFileNameW(NULL, p, cap);
        if (n > 0 && n < cap) return p;
        if (n == 0 || cap > 65536) ExitProcess(70);
    }
}

static int same_file(const WCHAR *a, const WCHAR *b) { /* one file by two spellings (links, short names) */
    BY_HANDLE_FILE_INFORMATION x, y;
    int same = 0;
    HANDLE ha = CreateFileW(a, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING, 0, NULL);
    HANDLE hb = CreateFileW(b, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING, 0, NULL);
    if (ha != INVALID_HANDLE_VALUE && hb != INVALID_HANDLE_VALUE && GetFileInformationByHandle(ha, &x) &&
        GetFileInformationByHandle(hb, &y))
        same = x.dwVolumeSerialNumber == y.dwVolumeSerialNumber && x.nFileIndexHigh == y.nFileIndexHigh &&
               x.nFileIndexLow == y.nFileIndexLow;
    if (ha != INVALID_HANDLE_VALUE) CloseHandle(ha);
    if (hb != INVALID_HANDLE_VALUE) CloseHandle(hb);
    return same;
}

/* Each PATH entry in turn (quotes around an entry are dropped, empty entries skipped). */
static WCHAR *next_path_dir(const WCHAR **cursor) {
    while (**cursor) {
        const WCHAR *start = *cursor;
        while (**cursor && **cursor != L';') (*cursor)++;
        size_t n = (size_t)(*cursor - start);
        if (**cursor) (*cursor)++;
        Buf dir = {0};
        for (size_t i = 0; i < n; i++)
            if (start[i] != L'"') add_c(&dir, start[i]);
        while (dir.n > 1 && (dir.p[dir.n - 1] == L'\\' || dir.p[dir.n - 1] == L'/') && dir.p[dir.n - 2] != L':')
            dir.p[--dir.n] = 0;
        if (dir.n) return dir.p;
    }
    return NULL;
}

/* ---- command lines ---- */

/* Splits a command line as the Microsoft C runtime does (the rules every Python on Windows uses). */
static WCHAR **split_command_line(const WCHAR *line, int *count) {
    size_t cap = 8, n = 0;
    WCHAR **argv = alloc(cap * sizeof(WCHAR *));
    const WCHAR *p = line;
    Buf first = {0}; /* the program: up to the closing quote or the first blank, no escapes */
    add(&first, L"");
    if (*p == L'"') {
        for (p++; *p && *p != L'"'; p++) add_c(&first, *p);
        if (*p) p++;
    } else {
        for (; *p && *p != L' ' && *p != L'\t'; p++) add_c(&first, *p);
    }
    argv[n++] = first.p;
    for (;;) {
        while (*p == L' ' || *p == L'\t') p++;
        if (!*p) break;
        Buf arg = {0};
        add(&arg, L"");
        int quoted = 0;
        while (*p && (quoted || (*p != L' ' && *p != L'\t'))) {
            size_t slashes = 0;
            while (*p == L'\\') p++, slashes++;
            if (*p == L'"') {
                for (size_t i = 0; i < slashes / 2; i++) add_c(&arg, L'\\');
                if (slashes % 2) {
                    add_c(&arg, L'"');
                    p++;
                } else if (quoted && p[1] == L'"') { /* "" inside quotes: a literal quote */
                    add_c(&arg, L'"');
                    p += 2;
                } else {
                    quoted = !quoted;
                    p++;
                }
            } else if (slashes) { /* plain backslashes; the loop looks at what follows afresh */
                for (size_t i = 0; i < slashes; i++) add_c(&arg, L'\\');
            } else {
                add_c(&arg, *p++);
            }
        }
        if (n + 1 >= cap) {
            WCHAR **more = alloc(cap * 2 * sizeof(WCHAR *));
            memcpy(more, argv, n * sizeof(WCHAR *));
            argv = more, cap *= 2;
        }
        argv[n++] = arg.p;
    }
    *count = (int)n;
    return argv;
}

/* Appends one argument so that the C runtime's split gives it back exactly (the inverse of the above). */
static void add_arg(Buf *line, const WCHAR *arg) {
    if (line->n) add_c(line, L' ');
    int plain = *arg != 0;
    for (const WCHAR *c = arg; *c; c++)
        if (*c == L' ' || *c == L'\t' || *c == L'\n' || *c == L'\v' || *c == L'"') plain = 0;
    if (plain) {
        add(line, arg);
        return;
    }
    add_c(line, L'"');
    for (const WCHAR *c = arg;; c++) {
        size_t slashes = 0;
        while (*c == L'\\') c++, slashes++;
        if (!*c) {
            for (size_t i = 0; i < slashes * 2; i++) add_c(line, L'\\');
            break;
        }
        if (*c == L'"') {
            for (size_t i = 0; i < slashes * 2 + 1; i++) add_c(line, L'\\');
        } else {
            for (size_t i = 0; i < slashes; i++) add_c(line, L'\\');
        }
        add_c(line, *c);
    }
    add_c(line, L'"');
}

/* The hook payload when the counting path below read it (issue 33): it is given back to the child's
 * stdin, then the rest of ours (run_waiting). */
static struct {
    char *bytes;
    DWORD n;
    int taken, whole;
} payload;

/* ---- processes ---- */

static void write_out(DWORD which, const char *bytes, DWORD n) {
    HANDLE h = GetStdHandle(which);
    DWORD done;
    while (n && WriteFile(h, bytes, n, &done, NULL) && done) bytes += done, n -= done;
}
static void write_str(DWORD which, const char *text) {
    DWORD n = 0;
    while (text[n]) n++;
    write_out(which, text, n);
}
static void write_wide(DWORD which, const WCHAR *text) { /* as UTF-8 */
    int n = WideCharToMultiByte(CP_UTF8, 0, text, -1, NULL, 0, NULL, NULL);
    if (n <= 1) return;
    char *bytes = alloc((size_t)n);
    WideCharToMultiByte(CP_UTF8, 0, text, -1, bytes, n, NULL, NULL);
    write_out(which, bytes, (DWORD)n - 1);
}

static BOOL WINAPI let_the_child_answer(DWORD event) { /* Ctrl+C goes to the child; we wait for it */
    (void)event;
    return TRUE;
}

static void inheritable_std_handles(BOOL on) {
    const DWORD which[] = {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
    for (int i = 0; i < 3; i++) {
        HANDLE h = GetStdHandle(which[i]);
        if (h && h != INVALID_HANDLE_VALUE) SetHandleInformation(h, HANDLE_FLAG_INHERIT, on ? HANDLE_FLAG_INHERIT : 0);
    }
}

/* Runs program with our own stdin, stdout and stderr; returns its exit code (127: it did not start).
 * The child is killed with us (a job object), as exec would have it on POSIX: a hook Claude Code
 * cancels leaves nothing behind. Processes the child starts are not held (silent breakaway). */
static DWORD run_waiting(const WCHAR *program, WCHAR *line) {
    STARTUPINFOW si = {0};
    PROCESS_INFORMATION pi = {0};
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
    si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
    inheritable_std_handles(TRUE);
    HANDLE job = CreateJobObjectW(NULL, NULL);
    if (job) {
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits = {0};
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK;
        SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits, sizeof limits);
    }
    HANDLE feed = NULL; /* the payload we read, given back through a pipe */
    SECURITY_ATTRIBUTES inherited = {sizeof inherited, NULL, TRUE};
    if (payload.taken && CreatePipe(&si.hStdInput, &feed, &inherited, 0))
        SetHandleInformation(feed, HANDLE_FLAG_INHERIT, 0);
    if (!CreateProcessW(program, line, NULL, NULL, TRUE, CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT, NULL, NULL,
                        &si, &pi)) {
        write_str(STD_ERROR_HANDLE, "keeper: error: cannot start ");
        write_wide(STD_ERROR_HANDLE, program);
        write_str(STD_ERROR_HANDLE, "\r\n");
        return 127;
    }
    if (job) AssignProcessToJobObject(job, pi.hProcess); /* may fail under an older job: then unheld */
    SetConsoleCtrlHandler(let_the_child_answer, TRUE);
    ResumeThread(pi.hThread);
    CloseHandle(pi.hThread);
    if (feed) { /* Python reads all of stdin first, so this ends; a child that exits unread breaks the pipe */
        CloseHandle(si.hStdInput);
        DWORD n, done;
        char *chunk = alloc(65536);
        int ok = WriteFile(feed, payload.bytes, payload.n, &done, NULL) || !payload.n;
        while (ok && !payload.whole && ReadFile(GetStdHandle(STD_INPUT_HANDLE), chunk, 65536, &n, NULL) && n)
            ok = WriteFile(feed, chunk, n, &done, NULL);
        CloseHandle(feed);
        payload.taken = 0;
    }
    WaitForSingleObject(pi.hProcess, INFINITE);
    DWORD code = 127;
    GetExitCodeProcess(pi.hProcess, &code);
    return code;
}

static HANDLE open_nul(DWORD access) {
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    return CreateFileW(L"NUL", access, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, NULL);
}

/* CreateProcessW handing the child exactly the std handles in si, none of the other inheritable
 * handles this process may hold (a handle Claude Code leaked into us while it started another hook
 * would otherwise keep that hook's pipe open for as long as our child runs). Falls back to plain
 * inheritance where the attribute list is refused. */
static BOOL create_with_std_handles_only(const WCHAR *program, WCHAR *line, DWORD flags, STARTUPINFOW *si,
                                         PROCESS_INFORMATION *pi) {
    HANDLE handles[3];
    DWORD count = 0;
    const HANDLE mine[] = {si->hStdInput, si->hStdOutput, si->hStdError};
    for (int i = 0; i < 3; i++) {
        int seen = mine[i] == NULL || mine[i] == INVALID_HANDLE_VALUE;
        for (DWORD j = 0; j < count; j++) seen |= handles[j] == mine[i];
        if (!seen) handles[count++] = mine[i];
    }
    SIZE_T size = 0;
    InitializeProcThreadAttributeList(NULL, 1, 0, &size);
    LPPROC_THREAD_ATTRIBUTE_LIST list = alloc(size ? size : 64);
    STARTUPINFOEXW ex = {0};
    ex.StartupInfo = *si;
    ex.StartupInfo.cb = sizeof ex;
    if (count && InitializeProcThreadAttributeList(list, 1, 0, &size)) {
        BOOL ok = UpdateProcThreadAttribute(list, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, handles, count * sizeof(HANDLE),
                                            NULL, NULL);
        ex.lpAttributeList = list;
        ok = ok && CreateProcessW(program, line, NULL, NULL, TRUE, flags | EXTENDED_STARTUPINFO_PRESENT, NULL, NULL,
                                  &ex.StartupInfo, pi);
        DeleteProcThreadAttributeList(list);
        if (ok) return TRUE;
    }
    return CreateProcessW(program, line, NULL, NULL, TRUE, flags, NULL, NULL, si, pi);
}

/* Starts program on its own, outliving us and Claude Code's hook, holding none of our handles:
 * Claude Code waits for the hook's stdout to close, so the set-up must not keep it open. Its own
 * output (a traceback before it could open its log) goes to the end of `log`. It gets a console of
 * its own with no window (not DETACHED_PROCESS: the programs it runs, venv and pip, would then each
 * open a console window), in a new process group, out of Claude Code's job where that allows it. */
static void run_detached(const WCHAR *program, WCHAR *line, const WCHAR *log) {
    STARTUPINFOW si = {0};
    PROCESS_INFORMATION pi = {0};
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = open_nul(GENERIC_READ);
    si.hStdOutput = si.hStdError = CreateFileW(log, FILE_APPEND_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                                               &sa, OPEN_ALWAYS, 0, NULL);
    if (si.hStdOutput == INVALID_HANDLE_VALUE) si.hStdOutput = si.hStdError = open_nul(GENERIC_WRITE);
    inheritable_std_handles(FALSE);
    DWORD flags = CREATE_NO_WINDOW | CREATE_NEW_PROCESS_GROUP | CREATE_UNICODE_ENVIRONMENT;
    if (create_with_std_handles_only(program, line, flags | CREATE_BREAKAWAY_FROM_JOB, &si, &pi) ||
        create_with_std_handles_only(program, line, flags, &si, &pi)) {
        CloseHandle(pi.hThread);
        CloseHandle(pi.hProcess);
    }
}

/* Runs a command with no stdin and returns what it printed (at most 4 KiB), or NULL when it did not
 * start or took longer than 20 s. */
static char *run_capture(const WCHAR *program, WCHAR *line, DWORD *size) {
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    HANDLE read_end, write_end;
    if (!CreatePipe(&read_end, &write_end, &sa, 0)) return NULL;
    SetHandleInformation(read_end, HANDLE_FLAG_INHERIT, 0);
    STARTUPINFOW si = {0};
    PROCESS_INFORMATION pi = {0};
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = open_nul(GENERIC_READ);
    si.hStdOutput = write_end;
    si.hStdError = open_nul(GENERIC_WRITE);
    inheritable_std_handles(FALSE);
    BOOL started = create_with_std_handles_only(program, line, CREATE_NO_WINDOW | CREATE_UNICODE_ENVIRONMENT, &si, &pi);
    CloseHandle(write_end);
    CloseHandle(si.hStdInput);
    CloseHandle(si.hStdError);
    if (!started) {
        CloseHandle(read_end);
        return NULL;
    }
    /* The answer is a few bytes, well within the pipe's buffer: wait for the exit, then take what is
     * there, so neither a hung program nor one that left a child holding the pipe can hold us. */
    int exited = WaitForSingleObject(pi.hProcess, 20000) == WAIT_OBJECT_0;
    if (!exited) TerminateProcess(pi.hProcess, 1);
    char *out = alloc(4097);
    DWORD got = 0, n, available = 0;
    while (exited && got < 4096 && PeekNamedPipe(read_end, NULL, 0, NULL, &available, NULL) && available &&
           ReadFile(read_end, out + got, available < 4096 - got ? available : 4096 - got, &n, NULL) && n)
        got += n;
    CloseHandle(read_end);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    *size = got;
    return exited ? out : NULL;
}


/* ---- finding Keeper ---- */

typedef struct {
    WCHAR *exe;     /* the interpreter's full path */
    WCHAR *prefix;  /* its command line up to the first Python option: "exe" or "exe" -3 */
} Python;

/* The command line: program, then fixed arguments, then ours from index `from` on. */
static WCHAR *command_line(const WCHAR *prefix, const WCHAR *const *fixed, int nfixed, WCHAR **argv, int argc,
                           int from) {
    Buf line = {0};
    add(&line, prefix);
    for (int i = 0; i < nfixed; i++) add_arg(&line, fixed[i]);
    for (int i = from; i < argc; i++) add_arg(&line, argv[i]);
    return line.p;
}

static WCHAR *quoted_program(const WCHAR *exe) {
    Buf line = {0};
    add_arg(&line, exe);
    return line.p;
}

static WCHAR *data_folder(const WCHAR *key) {
    WCHAR *data = env(L"CLAUDE_PLUGIN_DATA");
    if (data) return data;
    /* The Bash tool gets no CLAUDE_PLUGIN_DATA: find the plugin's data folder. */
    WCHAR *config = env(L"CLAUDE_CONFIG_DIR");
    if (!config) {
        WCHAR *home = env(L"USERPROFILE");
        if (!home) home = env(L"HOME");
        if (!home) return NULL;
        config = path_join(home, L".claude");
    }
    WCHAR *folder = path_join(config, L"plugins\\data");
    WIN32_FIND_DATAW found;
    HANDLE h = FindFirstFileW(path_join(folder, L"keeper-*"), &found);
    if (h == INVALID_HANDLE_VALUE) return NULL;
    WCHAR *first = NULL;
    do {
        if (!(found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) continue;
        WCHAR *candidate = path_join(folder, found.cFileName);
        if (!first) first = candidate;
        WCHAR *env_dir = cat3(candidate, L"\\env\\", key);
        if (is_file(path_join(env_dir, L"Scripts\\python.exe")) || is_file(path_join(env_dir, L"bin\\python"))) {
            first = candidate;
            break;
        }
    } while (FindNextFileW(h, &found));
    FindClose(h);
    return first;
}

/* A keeper.exe on PATH that is not this launcher, or NULL. */
static WCHAR *keeper_on_path(const WCHAR *self, const WCHAR *root) {
    WCHAR *search = env(L"PATH");
    if (!search || env(L"KEEPER_LAUNCHER_PASSED")) return NULL; /* reached again through another spelling */
    WCHAR *own_bin = path_join(root, L"bin");
    const WCHAR *cursor = search;
    for (WCHAR *dir; (dir = next_path_dir(&cursor));) {
        WCHAR *candidate = path_join(dir, L"keeper.exe");
        if (!is_file(candidate) || same_text(dir, own_bin) || same_text(candidate, self) || same_file(candidate, self))
            continue;
        return candidate;
    }
    return NULL;
}

/* Whether python, asked to, reads `probe` and says its size (and is 3.9 or newer). */
static int is_real_python(const WCHAR *prefix, const WCHAR *exe, const WCHAR *probe) {
    WIN32_FILE_ATTRIBUTE_DATA info;
    if (!GetFileAttributesExW(probe, GetFileExInfoStandard, &info)) return 0;
    unsigned long long size = ((unsigned long long)info.nFileSizeHigh << 32) | info.nFileSizeLow;
    char expected[24];
    int n = 0;
    do expected[n++] = (char)('0' + size % 10), size /= 10;
    while (size);
    const WCHAR *fixed[] = {L"-I", L"-c", CODE_PROBE, probe};
    DWORD got = 0;
    char *out = run_capture(exe, command_line(prefix, fixed, 4, NULL, 0, 0), &got);
    if (!out || got != (DWORD)n) return 0;
    for (int i = 0; i < n; i++)
        if (out[i] != expected[n - 1 - i]) return 0;
    return 1;
}

static int find_python(Python *py, const WCHAR *probe) {
    static const WCHAR *const names[] = {L"py.exe", L"python.exe", L"python3.exe"};
    for (int i = 0; i < 3; i++) {
        WCHAR *search = env(L"PATH");
        if (!search) return 0;
        const WCHAR *cursor = search;
        for (WCHAR *dir; (dir = next_path_dir(&cursor));) {
            if (contains_text(dir, L"WindowsApps")) continue; /* the Store's stubs and aliases */
            WCHAR *exe = path_join(dir, names[i]);
            if (!is_file(exe)) continue;
            WCHAR *prefix = quoted_program(exe);
            if (i == 0) prefix = cat3(prefix, L" -3", L"");
            if (is_real_python(prefix, exe, probe)) {
                py->exe = exe, py->prefix = prefix;
                return 1;
            }
        }
    }
    return 0;
}

static char *first_line(const WCHAR *path) { /* as `read -r line < path`; NULL when unreadable */
    HANDLE h = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, 0, NULL);
    if (h == INVALID_HANDLE_VALUE) return NULL;
    char *text = alloc(65537);
    DWORD got = 0, n;
    while (got < 65536 && ReadFile(h, text + got, 65536 - got, &n, NULL) && n) got += n;
    CloseHandle(h);
    for (DWORD i = 0; i < got; i++)
        if (text[i] == '\n' || text[i] == '\r') text[i] = 0;
    return text;
}

/* The environment folder's name for this code: <version>-<digest>, the digest of the package's files
 * committed beside them (hex, one line), so any change of code gets an environment of its own. */
static WCHAR *env_key(const WCHAR *root) {
    Buf key = {0};
    add(&key, KEEPER_VERSION L"-");
    char *digest = first_line(path_join(root, KEEPER_DIGEST));
    for (; digest && ((*digest >= '0' && *digest <= '9') || (*digest >= 'a' && *digest <= 'f')); digest++)
        add_c(&key, (WCHAR)*digest);
    return key.p;
}

#define NOT_RUN 0xFFFFFFFFu

/* 1. Runs Keeper in the environment of this code and returns its exit code; NOT_RUN when there is no
 * finished one, or it cannot import Keeper (then it is no longer marked finished: set up again). */
static DWORD run_env(const WCHAR *data, const WCHAR *key, const WCHAR *bare, WCHAR **argv, int argc) {
    if (!data) return NOT_RUN;
    WCHAR *env_dir = cat3(data, L"\\env\\", key);
    WCHAR *ready = path_join(env_dir, KEEPER_READY);
    WCHAR *python = path_join(env_dir, L"Scripts\\python.exe");
    WCHAR *site = path_join(env_dir, L"Lib\\site-packages");
    if (!is_file(ready) || !is_file(python)) return NOT_RUN;
    DWORD code;
    if (is_dir(path_join(site, L"keeper"))) {
        const WCHAR *fixed[] = {L"-I", L"-S", L"-c", bare, site};
        code = run_waiting(python, command_line(quoted_program(python), fixed, 5, argv, argc, 1));
    } else {
        const WCHAR *fixed[] = {L"-I", L"-c", CODE_MAIN};
        code = run_waiting(python, command_line(quoted_program(python), fixed, 3, argv, argc, 1));
    }
    if (code != NO_KEEPER) return code;
    DeleteFileW(ready);
    return NOT_RUN;
}

/* Whether an environment of an earlier build is there (an update): the set-up can start from it. */
static int has_earlier_env(const WCHAR *data) {
    WIN32_FIND_DATAW found;
    WCHAR *folder = path_join(data, L"env");
    HANDLE h = FindFirstFileW(path_join(folder, L"*"), &found);
    if (h == INVALID_HANDLE_VALUE) return 0;
    int seen = 0;
    do
        seen = (found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) && found.cFileName[0] != L'.' &&
               is_file(path_join(path_join(folder, found.cFileName), KEEPER_READY));
    while (!seen && FindNextFileW(h, &found));
    FindClose(h);
    return seen;
}

enum { SETUP_DETACHED, SETUP_FOREGROUND, SETUP_QUICK };

static void run_setup(const Python *py, const WCHAR *root, const WCHAR *data, int mode, DWORD *code) {
    const WCHAR *fixed[] = {L"-B", L"-I", path_join(root, KEEPER_BOOTSTRAP), L"--root", root, L"--data", data,
                            mode == SETUP_QUICK ? L"--quick" : L"--foreground"};
    WCHAR *line = command_line(py->prefix, fixed, mode == SETUP_DETACHED ? 7 : 8, NULL, 0, 0);
    DWORD size;
    if (mode == SETUP_FOREGROUND)
        *code = run_waiting(py->exe, line);
    else if (mode == SETUP_QUICK) /* no stdin, its output not ours; at most 20 s */
        run_capture(py->exe, line, &size);
    else
        run_detached(py->exe, line, path_join(data, L"setup.log"));
}

/* A hook that writes a session's file (a Stop, PreCompact or SessionEnd; with no event, whatever Codex's
 * payload names) met the set-up: bootstrap.py keeps it, its payload on stdin, and runs it once Keeper is
 * ready, so a session that ends meanwhile still gets its session file. Twin of bin/keeper's. */
static void keep_hook(const Python *py, const WCHAR *root, const WCHAR *data, const WCHAR *event) {
    DWORD n = GetCurrentDirectoryW(0, NULL);
    WCHAR *cwd = alloc((n + 1) * sizeof(WCHAR));
    if (!n || !GetCurrentDirectoryW(n + 1, cwd)) cwd[0] = 0;
    const WCHAR *fixed[] = {L"-B",    L"-I", path_join(root, KEEPER_BOOTSTRAP), L"--root", root, L"--data", data,
                            L"--keep", event, L"--cwd",                          cwd};
    HANDLE out = GetStdHandle(STD_OUTPUT_HANDLE), err = GetStdHandle(STD_ERROR_HANDLE), nul = open_nul(GENERIC_WRITE);
    SetStdHandle(STD_OUTPUT_HANDLE, nul); /* the hook's reply is ours alone */
    SetStdHandle(STD_ERROR_HANDLE, nul);
    run_waiting(py->exe, command_line(py->prefix, fixed, 11, NULL, 0, 0));
    SetStdHandle(STD_OUTPUT_HANDLE, out);
    SetStdHandle(STD_ERROR_HANDLE, err);
    CloseHandle(nul);
}

static int is(const WCHAR *a, const WCHAR *b) {
    for (; *a == *b; a++, b++)
        if (!*a) return 1;
    return 0;
}

/* Codex runs a hook's command through a shell and ignores its args: no arguments, under a hook
 * runner (CLAUDE_PLUGIN_ROOT set) and a payload on stdin (not a console) make it `keeper hook`,
 * whose event the payload's hook_event_name names. */
static WCHAR *as_hook[3];

/* ---- a tool use counted without Python (issue 33) ----
 * A PostToolUse (or, with no arguments, a hook whose payload names one: Codex passes none) is
 * answered here while the session's allowance lasts: one byte appended to Keeper's own tally, {}
 * printed, no python.exe started. Keeper writes the allowance and owns every rule; why a stale or
 * foreign one can never hold back a save request: keeper/hooks/allowance.py. The checks are
 * launcher/count.bash's (keep the two in step), except that values before tool_input may hold JSON
 * escapes here (Windows paths do), the payload must close its object exactly at its end (bash can
 * only look at the last byte), and the tally is appended under the byte lock Keeper takes on Windows. */

#define COUNT_MAX 65536 /* a payload this long or longer goes to Python */

static int has(const char *hay, DWORD n, const char *needle) {
    DWORD k = 0;
    while (needle[k]) k++;
    for (DWORD i = 0; i + k <= n; i++) {
        DWORD j = 0;
        while (j < k && hay[i + j] == needle[j]) j++;
        if (j == k) return 1;
    }
    return 0;
}

static int starts(const char *p, const char *end, const char *prefix) {
    for (; *prefix; p++, prefix++)
        if (p >= end || *p != *prefix) return 0;
    return 1;
}

static int hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* A JSON string's closing quote (p after the opening one), or NULL: none, a control character, an escape
 * JSON does not have, or any escape when plain (Python reads no payload that is not JSON). */
static const char *string_end(const char *p, const char *end, int plain) {
    for (; p < end && *p != '"'; p++) {
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p != '\\') continue;
        if (plain || ++p >= end) return NULL;
        if (*p == 'u') {
            for (int i = 0; i < 4; i++)
                if (++p >= end || !hex(*p)) return NULL;
        } else if (*p != '"' && *p != '\\' && *p != '/' && *p != 'b' && *p != 'f' && *p != 'n' && *p != 'r' &&
                   *p != 't') {
            return NULL;
        }
    }
    return p < end ? p : NULL;
}

/* The fields before tool_input, as Claude Code and Codex write them; NULL when anything is unusual. */
typedef struct {
    const char *sid, *cwd, *rest;
    const WCHAR *event;
    DWORD sid_n, cwd_n;
} Head;

static int read_sid(const char **at, const char *end, Head *h) { /* {"session_id":"<1-64 of [A-Za-z0-9_-]>" */
    const char *p = *at;
    if (!starts(p, end, "{\"session_id\":\"")) return 0;
    h->sid = p += 15;
    while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
                       *p == '-'))
        p++;
    h->sid_n = (DWORD)(p - h->sid);
    if (!h->sid_n || h->sid_n > 64 || p >= end || *p++ != '"') return 0;
    *at = p;
    return 1;
}

/* The key after a payload's comma (at *p): lower-case letters and _ in quotes, then a colon; returns
 * where its opening quote is and leaves *p at its value, or 0 when the key is unusual. */
static const char *read_key(const char **at, const char *end) {
    const char *p = *at, *key = ++p;
    if (p >= end || *p++ != '"') return 0;
    while (p < end && ((*p >= 'a' && *p <= 'z') || *p == '_')) p++;
    if (p == key + 1 || !starts(p, end, "\":")) return 0;
    *at = p + 2;
    return key;
}

static int skip_digits(const char **at, const char *end) { /* one or more, skipped */
    const char *p = *at;
    while (p < end && *p >= '0' && *p <= '9') p++;
    if (p == *at) return 0;
    *at = p;
    return 1;
}

/* A number, true, false or null at *p, as JSON spells it, skipped; 0 when there is none (a leading zero, a
 * stray sign: Python reads no such payload, and counts nothing). */
static int skip_bare(const char **at, const char *end) {
    const char *p = *at;
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++)
        if (starts(p, end, words[i])) {
            *at = p + (i == 1 ? 5 : 4);
            return 1;
        }
    if (p < end && *p == '-') p++;
    if (p < end && *p == '0') p++;
    else if (!skip_digits(&p, end)) return 0;
    if (p < end && *p == '.' && (++p, !skip_digits(&p, end))) return 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        if (++p < end && (*p == '+' || *p == '-')) p++;
        if (!skip_digits(&p, end)) return 0;
    }
    *at = p;
    return 1;
}

static int read_head(const char *p, const char *end, Head *h) {
    if (!read_sid(&p, end, h)) return 0;
    while (p < end && *p == ',') {
        const char *key = read_key(&p, end);
        if (!key) return 0;
        const char *value = p;
        if (starts(key, end, "\"tool_input\":")) {
            h->rest = value;
            return 1;
        }
        if (starts(key, end, "\"agent_")) return 0; /* a subagent */
        if (*p == '"') {
            const char *close = string_end(p + 1, end, 0);
            if (!close) return 0;
            if (starts(key, end, "\"cwd\":")) h->cwd = p + 1, h->cwd_n = (DWORD)(close - p - 1);
            if (starts(key, end, "\"hook_event_name\":\"PostToolUse\"")) h->event = L"post-tool-use";
            if (starts(key, end, "\"hook_event_name\":\"PostToolUseFailure\"")) h->event = L"post-tool-use-failure";
            p = close + 1;
        } else if (starts(p, end, "{\"level\":\"")) {
            const char *close = string_end(p + 10, end, 1);
            if (!close || !starts(close, end, "\"}")) return 0;
            p = close + 2;
        } else {
            if (!skip_bare(&p, end)) return 0;
        }
    }
    return 0;
}

/* Whether what follows tool_input closes the payload's object, once, at its end (a payload cut short
 * does not). */
static int closes_object(const char *p, const char *end) {
    int depth = 1, quoted = 0;
    for (; p < end; p++) {
        if (quoted) {
            if (*p == '\\') p++;
            else if (*p == '"') quoted = 0;
        } else if (*p == '"') {
            quoted = 1;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if ((*p == '}' || *p == ']') && --depth == 0) {
            break;
        }
    }
    if (p >= end) return 0;
    while (++p < end)
        if (*p != '\n' && *p != '\r' && *p != ' ' && *p != '\t') return 0;
    return 1;
}

static void add_utf8(Buf *b, const char *s, DWORD n) { /* UTF-8 bytes onto a wide buffer */
    int w = MultiByteToWideChar(CP_UTF8, 0, s, (int)n, NULL, 0);
    WCHAR *wide = alloc(((size_t)w + 1) * sizeof(WCHAR));
    MultiByteToWideChar(CP_UTF8, 0, s, (int)n, wide, w);
    add_n(b, wide, (size_t)w);
}

static void add_number(Buf *b, unsigned long long n) {
    WCHAR digits[24];
    int k = 0;
    do digits[k++] = (WCHAR)(L'0' + n % 10), n /= 10;
    while (n);
    while (k) add_c(b, digits[--k]);
}

/* Whatever chooses Keeper's store, settings and project for this call: the cwd and the environment. */
static int prefix_i(const WCHAR *s, const WCHAR *prefix) { /* case-insensitive (ASCII) */
    for (; *prefix; s++, prefix++)
        if (lower(*s) != lower(*prefix)) return 0;
    return 1;
}

static int absolute(const WCHAR *path) { /* C:\ or \\server */
    int drive = path && ((path[0] >= L'A' && path[0] <= L'Z') || (path[0] >= L'a' && path[0] <= L'z')) &&
                path[1] == L':' && (path[2] == L'\\' || path[2] == L'/');
    return drive || (path && (path[0] == L'\\' || path[0] == L'/') && (path[1] == L'\\' || path[1] == L'/'));
}

/* Whether the key names the project: Keeper starts from the first of %CLAUDE_PROJECT_DIR% and the payload's
 * cwd that is a folder, else from its own working directory (keeper.store.resolve.start_folder), which the
 * key does not hold; so that one must be an absolute path (C:\ or \\server) to a folder. count.bash's
 * keeper_key does the same. A cwd with an escape other than \\ or \/ is unusual: no. */
static int names_project(const Head *h) {
    WCHAR *first = env(L"CLAUDE_PROJECT_DIR");
    if (!first) {
        char *plain = alloc((size_t)h->cwd_n + 1);
        DWORD n = 0;
        for (DWORD i = 0; i < h->cwd_n; i++) {
            char c = h->cwd[i];
            if (c == '\\' && (++i >= h->cwd_n || (h->cwd[i] != '\\' && h->cwd[i] != '/'))) return 0;
            plain[n++] = h->cwd[i];
        }
        Buf wide = {0};
        add_utf8(&wide, plain, n);
        first = wide.p;
    }
    return absolute(first) && is_dir(first);
}

/* Whatever chooses Keeper's store, settings and project for this call: the cwd and the environment. */
static WCHAR *count_key(const Head *h) {
    static const WCHAR *const names[] = {L"CLAUDE_PROJECT_DIR=", L"HOME=",         L"XDG_CONFIG_HOME=", L"XDG_DATA_HOME=",
                                         L"USERPROFILE=",        L"LOCALAPPDATA=", L"APPDATA=",         L"KEEPER_"};
    Buf key = {0};
    add(&key, L"keeper.exe " KEEPER_VERSION L" cwd=");
    add_number(&key, h->cwd_n), add_c(&key, L':'), add_utf8(&key, h->cwd, h->cwd_n);
    WCHAR *block = GetEnvironmentStringsW();
    for (WCHAR *entry = block; block && *entry; entry += wlen(entry) + 1) {
        int wanted = 0;
        for (int i = 0; i < 8; i++) wanted |= prefix_i(entry, names[i]);
        if (!wanted || prefix_i(entry, L"KEEPER_COUNTE") || prefix_i(entry, L"KEEPER_LAUNCHER_")) continue;
        add_c(&key, L' '), add_number(&key, wlen(entry)), add_c(&key, L':'), add(&key, entry);
    }
    return key.p;
}

/* Keeper's record for this call's session, CLAUDE_PLUGIN_DATA\counter\<session><suffix>, and the launcher's
 * key for it, both passed on to Keeper (in the variables ``where`` and ``keyed``) to write the next one; NULL
 * when there is none to read: no absolute data folder, or a key that would not name the project. */
static WCHAR *passed_record(const Head *h, const WCHAR *suffix, const WCHAR *where, const WCHAR *keyed, WCHAR **key) {
    WCHAR *data = env(L"CLAUDE_PLUGIN_DATA");
    if (!data || !(data[0] == L'\\' || (data[0] && data[1] == L':'))) return NULL;
    if (!names_project(h)) return NULL; /* Keeper would start from its own folder */
    Buf sid = {0};
    add_utf8(&sid, h->sid, h->sid_n);
    WCHAR *record = cat3(cat3(data, L"\\counter\\", sid.p), suffix, L"");
    *key = count_key(h);
    SetEnvironmentVariableW(where, record);
    SetEnvironmentVariableW(keyed, *key);
    return record;
}

static int older(const WCHAR *path, FILETIME than) {
    WIN32_FILE_ATTRIBUTE_DATA info;
    return GetFileAttributesExW(path, GetFileExInfoStandard, &info) && CompareFileTime(&info.ftLastWriteTime, &than) < 0;
}

static int plain_file(const WCHAR *path) {
    DWORD a = GetFileAttributesW(path);
    return a != INVALID_FILE_ATTRIBUTES && !(a & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT));
}

/* The next line of the record; NULL at its end, and at a line holding a NUL, which Keeper never writes and
 * which would end the line early as a C string. */
static char *next_line(char **cursor, char *end, DWORD *n) {
    char *start = *cursor, *p = start;
    while (p < end && *p != '\n')
        if (!*p++) return NULL;
    if (p >= end) return NULL;
    *cursor = p + 1;
    *n = (DWORD)(p - start);
    return start;
}

static WCHAR *line_at(char **cursor, char *end) { /* the next line of the record, as wide text; NULL at its end */
    DWORD n;
    char *start = next_line(cursor, end, &n);
    if (!start) return NULL;
    Buf line = {0};
    add(&line, L"");
    add_utf8(&line, start, n);
    return line.p;
}

/* 1 when the file at path holds exactly the n bytes at held: what Keeper read when it wrote the
 * allowance (a file replaced by one with an older mtime, as mv, cp -p and rsync -a leave it, differs). */
static int holds(const WCHAR *path, const char *held, DWORD n) {
    HANDLE f = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, 0, NULL);
    if (f == INVALID_HANDLE_VALUE) return 0;
    char *data = alloc(n + 1);
    DWORD got = 0, k;
    while (got < n + 1 && ReadFile(f, data + got, n + 1 - got, &k, NULL) && k) got += k;
    CloseHandle(f);
    if (got != n) return 0;
    for (DWORD i = 0; i < n; i++)
        if (data[i] != held[i]) return 0;
    return 1;
}

/* The record's settings lines, up to its end: 1 when every settings file is as Keeper read it. A
 * "+file" must be older than the record and, when "=size" and its bytes follow, hold those bytes
 * (or, in a Stop's record, ``twins``, when "@twin" follows, have the twin's mtime); a "-file" must
 * still be absent. */
static int same_mtime(const WCHAR *a, const WCHAR *b) {
    WIN32_FILE_ATTRIBUTE_DATA x, y;
    return GetFileAttributesExW(a, GetFileExInfoStandard, &x) && GetFileAttributesExW(b, GetFileExInfoStandard, &y) &&
           CompareFileTime(&x.ftLastWriteTime, &y.ftLastWriteTime) == 0;
}

static int settings_hold(char **cursor, char *stop, FILETIME written, int twins) {
    const WCHAR *file = NULL, *line;
    for (;;) {
        if (!(line = line_at(cursor, stop))) return 0;
        if (is(line, L"end")) return 1;
        if (*line == L'+' && older(line + 1, written)) {
            file = line + 1;
            continue;
        }
        if (*line == L'@' && twins && file && same_mtime(file, line + 1)) { /* a Stop's record: the mtime Keeper saw */
            file = NULL;
            continue;
        }
        if (*line == L'=' && file) {
            DWORD size = 0, digits = 0;
            for (const WCHAR *c = line + 1; *c; c++, digits++) {
                if (*c < L'0' || *c > L'9' || digits >= 5) return 0;
                size = size * 10 + (DWORD)(*c - L'0');
            }
            if (!digits || stop - *cursor < (long long)size + 1 || (*cursor)[size] != '\n') return 0;
            if (!holds(file, *cursor, size)) return 0;
            *cursor += size + 1;
            file = NULL;
            continue;
        }
        if (*line == L'-' && GetFileAttributesW(line + 1) == INVALID_FILE_ATTRIBUTES) continue;
        return 0;
    }
}

/* 1 when the tool use was counted within the allowance and {} printed; 0 to go on to Python, with the
 * payload kept for the child and what Keeper needs for the next allowance in the environment. */
static int read_payload(void) { /* up to COUNT_MAX bytes of stdin, kept for the child; 1 when that is all */
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
    payload.bytes = alloc(COUNT_MAX);
    payload.taken = 1;
    DWORD n;
    while (payload.n < COUNT_MAX && ReadFile(in, payload.bytes + payload.n, COUNT_MAX - payload.n, &n, NULL) && n)
        payload.n += n;
    return payload.whole = payload.n < COUNT_MAX;
}

/* A whole file of at most max bytes, and its attributes; NULL when unreadable or longer (not Keeper's). */
static char *read_record(const WCHAR *path, DWORD max, DWORD *size, WIN32_FILE_ATTRIBUTE_DATA *written) {
    HANDLE f = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, 0, NULL);
    if (f == INVALID_HANDLE_VALUE) return NULL;
    char *body = alloc((size_t)max + 1);
    DWORD n;
    *size = 0;
    while (*size <= max && ReadFile(f, body + *size, max + 1 - *size, &n, NULL) && n) *size += n;
    CloseHandle(f);
    return *size <= max && GetFileAttributesExW(path, GetFileExInfoStandard, written) ? body : NULL;
}

static void append_hook_line(const WCHAR *stats, const WCHAR *event) { /* the line Keeper's hook log gets */
    HANDLE s = CreateFileW(stats, FILE_APPEND_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    if (s == INVALID_HANDLE_VALUE) return;
    Buf entry = {0};
    add(&entry, event);
    add(&entry, L"\t0\t0.0\n");
    int bytes = WideCharToMultiByte(CP_UTF8, 0, entry.p, (int)entry.n, NULL, 0, NULL, NULL);
    char *utf8 = alloc((size_t)bytes + 1);
    DWORD done = 0;
    WideCharToMultiByte(CP_UTF8, 0, entry.p, (int)entry.n, utf8, bytes, NULL, NULL);
    WriteFile(s, utf8, (DWORD)bytes, &done, NULL);
    CloseHandle(s);
}

/* Appends the byte to the tally under the lock Keeper's own appends take (byte 0); 1 when it is there, with
 * the tally's size after it (this call's place) in *place, or -1 when that cannot be read. */
static int append_tally(const WCHAR *tally, const char *byte, long long *place) {
    HANDLE t = CreateFileW(tally, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                           NULL, OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    if (t == INVALID_HANDLE_VALUE) return 0;
    OVERLAPPED at_start = {0}, at_end = {0};
    at_end.Offset = at_end.OffsetHigh = 0xFFFFFFFF; /* write at the end of the file */
    LARGE_INTEGER size = {0};
    DWORD done = 0;
    int appended = LockFileEx(t, LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &at_start) && WriteFile(t, byte, 1, &done, &at_end) &&
                   done == 1;
    *place = appended && GetFileSizeEx(t, &size) ? size.QuadPart : -1;
    UnlockFileEx(t, 0, 1, 0, &at_start);
    CloseHandle(t);
    return appended;
}

static int count_without_python(WCHAR **argv, int argc, const WCHAR **named) {
    Head h = {0};
    if (!read_payload()) return 0;
    const char *p = payload.bytes, *end = p + payload.n;
    if (!read_head(p, end, &h)) return 0;
    if (argc != 3 && !(*named = h.event)) return 0; /* no event argument: the payload's, when a tool use's */
    DWORD rest = (DWORD)(end - h.rest);
    if (has(h.rest, rest, "\"agent_id\"") || has(h.rest, rest, "\"agent_type\"") || has(h.rest, rest, "keeper")) return 0;
    for (const char *u = h.rest; u + 4 < end; u++) /* a letter escaped: \u, then not 000 or 001 */
        if (u[0] == '\\' && u[1] == 'u' && (u[2] != '0' || u[3] != '0' || (u[4] != '0' && u[4] != '1'))) return 0;
    if (!closes_object(h.rest, end)) return 0;
    WCHAR *key, *record = h.cwd ? passed_record(&h, L"", L"KEEPER_COUNTER", L"KEEPER_COUNTER_KEY", &key) : NULL;
    if (!record) return 0;

    /* The allowance Keeper wrote: for this key, every settings file unchanged since, and complete. */
    WIN32_FILE_ATTRIBUTE_DATA written;
    DWORD size = 0;
    char *body = read_record(record, COUNT_MAX, &size, &written);
    if (!body) return 0;
    char *cursor = body, *stop = body + size;
    WCHAR *tag = line_at(&cursor, stop), *found = line_at(&cursor, stop), *limit = line_at(&cursor, stop);
    WCHAR *tally = line_at(&cursor, stop), *stats = line_at(&cursor, stop), *python = line_at(&cursor, stop);
    if (!python || !is(tag, L"keeper-allowance 1") || !is(found, key) || !is_file(python)) return 0;
    long long allowed = 0;
    int negative = *limit == L'-', digits = 0;
    for (const WCHAR *c = limit + negative; *c; c++, digits++) {
        if (*c < L'0' || *c > L'9' || digits >= 15) return 0;
        allowed = allowed * 10 + (*c - L'0');
    }
    if (!digits) return 0;
    if (negative) allowed = -allowed;
    if (!settings_hold(&cursor, stop, written.ftLastWriteTime, 0)) return 0;
    if (!plain_file(tally) || !plain_file(stats)) return 0;

    long long place = 0;
    if (!append_tally(tally, "u", &place)) return 0;
    SetEnvironmentVariableW(L"KEEPER_COUNTED", tally); /* in the tally now: Keeper must not count it again */
    if (place < 0 || place > allowed) return 0;

    append_hook_line(stats, argc == 3 ? argv[2] : *named);
    write_str(STD_OUTPUT_HANDLE, "{}");
    return 1;
}

/* ---- a Stop with nothing new answered without Python ----
 * A `hook stop` whose payload, tally and files are what Keeper's record of the last idle Stop vouches
 * for ($CLAUDE_PLUGIN_DATA\counter\<session>.stop, written by keeper/hooks/idle.py, docs/counter.md)
 * is answered here: one line in the hook log, {} printed, no python.exe started. launcher/stop.bash's
 * checks (keep the two in step), except that strings around the reply may hold JSON escapes here
 * (Windows paths do) and the payload may end in whitespace. */

#define STOP_RECORD_MAX (1 << 18) /* the reply (60 KiB at most), three settings files' bytes, the lines */

/* A field of a hook's payload Keeper reads: its key (quoted, with the colon), then where its value is and
 * its length (a string's inside, without the quotes), whether it is a string, and how often it came. */
typedef struct {
    const char *key, *at;
    DWORD n, seen;
    int text;
} Field;

/* The fields of a hook's payload as Claude Code writes it: the session id first, then each key with a plain
 * value (a JSON string, number, true, false, null, [] or {}), each of ``fields`` and the session id once, the
 * object closed at the end (whitespace after it); 0 when anything is unusual. */
static int read_fields(const char *p, const char *end, Head *h, Field *fields, int count) {
    if (!read_sid(&p, end, h)) return 0;
    while (p < end && *p == ',') {
        const char *key = read_key(&p, end), *value = p;
        if (!key || starts(key, end, "\"session_id\":")) return 0;
        if (*p == '"') {
            const char *close = string_end(p + 1, end, 0);
            if (!close) return 0;
            p = close + 1;
        } else if (starts(p, end, "[]") || starts(p, end, "{}")) {
            p += 2;
        } else if (!skip_bare(&p, end)) {
            return 0;
        }
        for (Field *f = fields; f < fields + count; f++) {
            if (!starts(key, end, f->key)) continue;
            if (f->seen++) return 0;
            f->text = *value == '"';
            f->at = value + f->text, f->n = (DWORD)(p - value) - 2 * (DWORD)f->text;
        }
    }
    if (p >= end || *p++ != '}') return 0;
    while (p < end && (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t')) p++;
    return p == end;
}

enum { STOP_CWD, STOP_TRANSCRIPT, STOP_ACTIVE, STOP_REPLY, STOP_GEMINI };

/* The fields of a Stop's payload: the transcript and the reply strings, not a continuation (its reply is not
 * the session's), no Gemini's reply field; 0 when anything is unusual. */
static int read_stop(const char *p, const char *end, Head *h, Field *f) {
    static const char *const keys[] = {"\"cwd\":", "\"transcript_path\":", "\"stop_hook_active\":",
                                       "\"last_assistant_message\":", "\"prompt_response\":"};
    for (int i = 0; i <= STOP_GEMINI; i++) f[i].key = keys[i];
    if (!read_fields(p, end, h, f, STOP_GEMINI + 1) || f[STOP_GEMINI].seen) return 0;
    if (f[STOP_ACTIVE].seen && (f[STOP_ACTIVE].text || !starts(f[STOP_ACTIVE].at, end, "false"))) return 0;
    h->cwd = f[STOP_CWD].at, h->cwd_n = f[STOP_CWD].n;
    return f[STOP_CWD].text && f[STOP_TRANSCRIPT].text && f[STOP_REPLY].text;
}

static int line_is(char **cursor, char *stop, const char *bytes, DWORD n) { /* the next line, byte for byte */
    char *p = *cursor;
    if (stop - p < (long long)n + 1 || p[n] != '\n') return 0;
    for (DWORD i = 0; i < n; i++)
        if (p[i] != bytes[i]) return 0;
    *cursor = p + n + 1;
    return 1;
}

/* 1 when the record vouches for this Stop and {} was printed; 0 to go on to Python, with the payload
 * kept for the child and where Keeper's next record goes, and its key, in the environment. */
static int stop_without_python(void) {
    Head h = {0};
    Field s[STOP_GEMINI + 1] = {0};
    WCHAR *key;
    if (!read_payload() || !read_stop(payload.bytes, payload.bytes + payload.n, &h, s)) return 0;
    WCHAR *record = passed_record(&h, L".stop", L"KEEPER_LAUNCHER_STOP", L"KEEPER_LAUNCHER_KEY", &key);
    if (!record) return 0;

    WIN32_FILE_ATTRIBUTE_DATA written, at;
    DWORD size = 0;
    char *body = read_record(record, STOP_RECORD_MAX, &size, &written);
    if (!body) return 0;
    char *cursor = body, *stop = body + size;
    WCHAR *tag = line_at(&cursor, stop), *found = line_at(&cursor, stop);
    if (!found || !is(tag, L"keeper-stop 1") || !is(found, key)) return 0;
    if (!line_is(&cursor, stop, s[STOP_TRANSCRIPT].at, s[STOP_TRANSCRIPT].n) ||
        !line_is(&cursor, stop, s[STOP_REPLY].at, s[STOP_REPLY].n))
        return 0;
    WCHAR *tally = line_at(&cursor, stop), *held = line_at(&cursor, stop), *stats = line_at(&cursor, stop);
    WCHAR *python = line_at(&cursor, stop);
    if (!python || !is_file(python) || !plain_file(stats)) return 0;
    unsigned long long tally_size = 0;
    int digits = 0;
    for (const WCHAR *c = held; *c; c++, digits++) {
        if (*c < L'0' || *c > L'9' || digits >= 7) return 0;
        tally_size = tally_size * 10 + (unsigned long long)(*c - L'0');
    }
    if (!digits || !settings_hold(&cursor, stop, written.ftLastWriteTime, 1)) return 0;
    if (GetFileAttributesExW(tally, GetFileExInfoStandard, &at)) { /* the tally only grows: the same size is the same tally */
        if (!plain_file(tally) || at.nFileSizeHigh || at.nFileSizeLow != tally_size) return 0;
    } else if (tally_size) {
        return 0; /* none yet: no tool use, as Keeper read it */
    }
    append_hook_line(stats, L"stop");
    write_str(STD_OUTPUT_HANDLE, "{}");
    return 1;
}

/* ---- a prompt with nothing to recall answered without Python ----
 * A `hook user-prompt-submit` whose payload, files and words Keeper's record for the session vouches for
 * ($CLAUDE_PLUGIN_DATA\counter\<session>.prompt, written by keeper/hooks/quietprompt.py, docs/counter.md) is
 * answered here: `p` appended to the tally (under Keeper's lock) and the hook log's line, {} printed, no
 * python.exe started. launcher/prompt.bash's checks and its word rules, decision for decision (keep the two in
 * step), except that strings around the prompt may hold JSON escapes here (Windows paths do), the fields may
 * come in any order after the session id, the payload may end in whitespace, and the words the record lists
 * are looked up in a table rather than by a pattern over the line. */

#define PROMPT_MAX 4096              /* bytes of a prompt read here; a longer one goes to Python */
#define PROMPT_RECORD_MAX (1 << 20) /* the held beginnings (64 KiB at most), 1,000 names, the settings, the files */

/* A set of words (pointers into text that outlives it), by open addressing. */
typedef struct {
    const char **at;
    DWORD *n, cap;
} Words;

static void words_init(Words *w, DWORD most) {
    for (w->cap = 16; w->cap < 2 * (most + 1);) w->cap *= 2;
    w->at = alloc(w->cap * sizeof *w->at);
    w->n = alloc(w->cap * sizeof *w->n);
}

static int same_bytes(const char *a, const char *b, DWORD n) {
    while (n--)
        if (*a++ != *b++) return 0;
    return 1;
}

static DWORD word_slot(const Words *w, const char *s, DWORD n) { /* where s is, or the empty slot it would take */
    DWORD i = 2166136261u; /* FNV-1a */
    for (DWORD k = 0; k < n; k++) i = (i ^ (unsigned char)s[k]) * 16777619u;
    for (i &= w->cap - 1; w->at[i] && !(w->n[i] == n && same_bytes(w->at[i], s, n)); i = (i + 1) & (w->cap - 1));
    return i;
}

static int words_has(const Words *w, const char *s, DWORD n) { return w->at[word_slot(w, s, n)] != NULL; }

static int words_add(Words *w, const char *s, DWORD n) { /* 1 when s was not there yet */
    DWORD i = word_slot(w, s, n);
    if (w->at[i]) return 0;
    w->at[i] = s, w->n[i] = n;
    return 1;
}

/* The words of one of the record's lines, as bash's *" $word "* finds them: each between two spaces. */
static Words spaced_words(const char *line, DWORD n) {
    Words w = {0};
    DWORD spaces = 0, last = n;
    for (DWORD i = 0; i < n; i++) spaces += line[i] == ' ';
    words_init(&w, spaces);
    for (DWORD i = 0; i < n; i++) {
        if (line[i] != ' ') continue;
        if (last < i) words_add(&w, line + last + 1, i - last - 1);
        last = i;
    }
    return w;
}

/* What the record says about the memory, for the prompt's words (prompt.bash's variables of the same names). */
typedef struct {
    const char *mode, *own, *respelled;
    DWORD mode_n, own_n, respelled_n;
    unsigned long long least, hits, size;
    Words stops, dated, held;
} Memory;

static int is_up(char c) { return c >= 'A' && c <= 'Z'; }
static int is_low(char c) { return c >= 'a' && c <= 'z'; }
static int is_mark(char c) { return c == '_' || c == '.' || c == '/' || c == '-'; } /* inside an identifier */

static int holds_byte(const char *s, DWORD n, char c) {
    for (DWORD i = 0; i < n; i++)
        if (s[i] == c) return 1;
    return 0;
}

/* Whether the lower-case word may be read as one of the date words by a slip (prompt.bash's
 * keeper_prompt_respelled: the checks before dates.respelled's edit distance). */
static int respelled(const char *word, DWORD n, const Memory *m) {
    if (n < 5) return 0;
    for (DWORD i = 0; i < n; i++)
        if (!is_low(word[i])) return 0;
    DWORD bound = n > 6 ? 2 : 1;
    for (const char *t = m->respelled, *end = t + m->respelled_n; t < end;) {
        while (t < end && (*t == ' ' || *t == '\t')) t++;
        DWORD tn = 0;
        while (t + tn < end && t[tn] != ' ' && t[tn] != '\t') tn++;
        const char *target = t;
        t += tn;
        if (!tn || !(word[0] == target[0] || (tn > 1 && word[1] == target[1]))) continue;
        if (n > tn + bound || tn > n + bound) continue;
        DWORD missing = 0;
        for (DWORD i = 0; i < tn; i++) /* each letter once */
            missing += !holds_byte(target, i, target[i]) && !holds_byte(word, n, target[i]);
        if (missing <= bound) return 1;
    }
    return 0;
}

/* Whether a unit may give a held term (prompt.bash's keeper_prompt_unit): kind 'c', a whole identifier, by
 * its first letters; 'w', a word, by any of its first one to `size` letters, those and an `e`, or its first
 * two and `bl` before a `bil` (`y` read as `i` throughout). */
static int may_be_held(char kind, const char *lower, DWORD n, const Memory *m) {
    char *word = alloc(n + 2);
    for (DWORD i = 0; i < n; i++) word[i] = lower[i] == 'y' ? 'i' : lower[i];
    if (kind == 'c') return words_has(&m->held, word, n < m->size ? n : (DWORD)m->size);
    if (n < 2 || words_has(&m->stops, lower, n)) return 0;
    char key[16];
    for (DWORD i = 1; i <= m->size && i <= n; i++) {
        if (words_has(&m->held, word, i)) return 1;
        for (DWORD k = 0; k < i; k++) key[k] = word[k];
        key[i] = 'e';
        if (i < m->size && words_has(&m->held, key, i + 1)) return 1;
    }
    if (n < 5 || !same_bytes(word + 2, "bil", 3)) return 0;
    key[0] = word[0], key[1] = word[1], key[2] = 'b', key[3] = 'l';
    return words_has(&m->held, key, 4);
}

/* Counts a unit (kind, then its lower-case text) once; 1 when that made `hits` of them. */
static int counted(Words *units, DWORD *count, char kind, const char *lower, DWORD n, const Memory *m) {
    char *unit = alloc(n + 1);
    unit[0] = kind;
    for (DWORD i = 0; i < n; i++) unit[i + 1] = lower[i];
    return words_add(units, unit, n + 1) && may_be_held(kind, lower, n, m) && ++*count >= m->hits;
}

/* Whether fewer than `hits` of the terms of the identifiers in text may be held (prompt.bash's
 * keeper_prompt_held): the words and whole identifiers as keeper.recall.tokens cuts them, each once; 0 too on
 * a day asked for or a word a slip in which could be one (the search decides). */
static int holds_too_few(const char *text, DWORD n, const Memory *m) {
    Words units = {0};
    DWORD count = 0;
    words_init(&units, n);
    for (DWORD i = 0; i < n;) {
        while (i < n && !is_up(text[i]) && !is_low(text[i]) && !is_mark(text[i])) i++;
        DWORD from = i;
        while (i < n && (is_up(text[i]) || is_low(text[i]) || is_mark(text[i]))) i++;
        DWORD to = i, letters = 1, uppers = 0, lowers = 0, later_upper = 0;
        while (from < to && is_mark(text[from])) from++;
        while (to > from && is_mark(text[to - 1])) to--;
        if (from == to) continue;
        char *lower = alloc(to - from + 1);
        for (DWORD k = from; k < to; k++) {
            char c = text[k];
            lower[k - from] = is_up(c) ? (char)(c + 32) : c;
            letters &= !is_mark(c), uppers += is_up(c), lowers += is_low(c), later_upper += k > from && is_up(c);
        }
        DWORD len = to - from;
        if (words_has(&m->dated, lower, len) || respelled(lower, len, m)) return 0;
        if (letters && (!uppers || !lowers || !later_upper)) {
            if (counted(&units, &count, 'w', lower, len, m)) return 0;
            continue;
        }
        /* a compound: its parts at the marks and the case changes, its whole beside them */
        DWORD *cuts = alloc((len + 1) * sizeof *cuts), parts = 0;
        for (DWORD k = from; k < to; k++) {
            const char *c = text + k;
            if (is_mark(*c)) continue;
            if (k == from || is_mark(c[-1]) || (is_up(c[0]) && is_low(c[-1])) ||
                (is_up(c[-1]) && is_up(c[0]) && k + 1 < to && is_low(c[1])))
                cuts[parts++] = k - from;
        }
        cuts[parts] = len;
        if (parts > 1 && counted(&units, &count, 'c', lower, len, m)) return 0;
        for (DWORD k = 0; k < parts; k++) {
            DWORD end = cuts[k];
            while (end < cuts[k + 1] && !is_mark(lower[end])) end++;
            if (counted(&units, &count, 'w', lower + cuts[k], end - cuts[k], m)) return 0;
        }
    }
    return 1;
}

/* Whether Keeper answers the prompt, the JSON string's inside raw, with nothing, by what the record says
 * (prompt.bash's keeper_prompt_quiet); 0 on any doubt: Python decides. */
static int answers_nothing(const char *raw, DWORD n, const Memory *m) {
    char *text = alloc(n + 1);
    DWORD len = 0, words = 0;
    for (DWORD i = 0; i < n; i++) { /* printable ASCII; escapes of a quote, a slash, the line breaks and tabs only */
        char c = raw[i];
        if (c < 0x20 || c > 0x7e) return 0;
        if (c == '\\') {
            c = ++i < n ? raw[i] : 0;
            if (c != '"' && c != '/' && c != 'n' && c != 't' && c != 'r') return 0;
            if (c != '"' && c != '/') c = ' ';
        }
        text[len++] = c;
    }
    if ((len >= m->own_n && same_bytes(text, m->own, m->own_n)) || (len && text[0] == '<')) return 0;
    DWORD first = 0;
    while (first < len && text[first] == ' ') first++;
    if (first < len && text[first] == '/') return 0; /* a command: Python answers it */
    if (m->mode_n == 5 && same_bytes(m->mode, "quiet", 5)) return 1;
    for (DWORD i = 0; i < len; i++) words += text[i] != ' ' && (i == 0 || text[i - 1] == ' ');
    if (words < m->least) return 1; /* too short to recall anything */
    if (!(m->mode_n == 4 && same_bytes(m->mode, "gate", 4))) return 0;
    for (DWORD i = 0; i < len; i++)
        if (text[i] >= '0' && text[i] <= '9') return 0; /* a digit may be a date */
    return holds_too_few(text, len, m);
}

/* Whether the folder's .md files are the names the record lists ('/' between, in byte order), none hidden. */
static int lists_names(const WCHAR *folder, const char *names, DWORD n) {
    Words listed = {0};
    DWORD count = n > 0, from = 0, before = 0, before_n = 0;
    for (DWORD i = 0; i < n; i++) count += names[i] == '/';
    words_init(&listed, count);
    for (DWORD i = 0; n && i <= n; i++) {
        if (i < n && names[i] != '/') continue;
        DWORD k = 0, size = i - from;
        while (k < size && k < before_n && names[from + k] == names[before + k]) k++;
        if (from && (k == size || (k < before_n && (unsigned char)names[from + k] < (unsigned char)names[before + k])))
            return 0; /* each once, sorted */
        words_add(&listed, names + from, size);
        before = from, before_n = size, from = i + 1;
    }
    WIN32_FIND_DATAW found;
    HANDLE h = FindFirstFileW(path_join(folder, L"*"), &found);
    if (h == INVALID_HANDLE_VALUE) return 0;
    DWORD seen = 0;
    int same = 1;
    do {
        int size = WideCharToMultiByte(CP_UTF8, 0, found.cFileName, -1, NULL, 0, NULL, NULL) - 1;
        char *name = alloc((size_t)size + 2);
        WideCharToMultiByte(CP_UTF8, 0, found.cFileName, -1, name, size + 1, NULL, NULL);
        if (size < 3 || !same_bytes(name + size - 3, ".md", 3)) continue;
        same = name[0] != '.' && words_has(&listed, name, (DWORD)size);
        seen++;
    } while (same && FindNextFileW(h, &found));
    FindClose(h);
    return same && seen == count;
}

static int number_of(const char **at, const char *end, unsigned long long *value) { /* 1-18 digits, then a space */
    const char *p = *at;
    for (*value = 0; p < end && *p >= '0' && *p <= '9' && p - *at < 18; p++) *value = *value * 10 + (unsigned)(*p - '0');
    if (p == *at || p >= end || *p != ' ') return 0;
    *at = p + 1;
    return 1;
}

/* The record's lines from the mode to Keeper's own request: 0 when one is missing, or the limits are not
 * "<least words> <least terms> <letters>" (the letters 1-9). */
static int read_memory(char **cursor, char *stop, Memory *m) {
    DWORD n[4];
    const char *line[4];
    if (!(m->mode = next_line(cursor, stop, &m->mode_n))) return 0;
    for (int i = 0; i < 4; i++)
        if (!(line[i] = next_line(cursor, stop, &n[i]))) return 0;
    if (!(m->own = next_line(cursor, stop, &m->own_n))) return 0;
    const char *limits = line[0], *end = line[0] + n[0];
    if (!number_of(&limits, end, &m->least) || !number_of(&limits, end, &m->hits)) return 0;
    if (limits + 1 != end || *limits < '1' || *limits > '9') return 0;
    m->size = (unsigned long long)(*limits - '0');
    m->stops = spaced_words(line[1], n[1]);
    m->dated = spaced_words(line[2], n[2]);
    m->respelled = line[3], m->respelled_n = n[3];
    return 1;
}

enum { PROMPT_CWD, PROMPT_TEXT, PROMPT_EVENT };

/* 1 when the record vouches for answering this prompt with nothing and {} was printed; 0 to go on to
 * Python, with the payload kept for the child and where Keeper's next record goes, and its key, in the
 * environment. */
static int prompt_without_python(void) {
    Head h = {0};
    Field f[PROMPT_EVENT + 1] = {0};
    WCHAR *key;
    f[PROMPT_CWD].key = "\"cwd\":", f[PROMPT_TEXT].key = "\"prompt\":", f[PROMPT_EVENT].key = "\"hook_event_name\":";
    if (!read_payload() || !read_fields(payload.bytes, payload.bytes + payload.n, &h, f, PROMPT_EVENT + 1)) return 0;
    if (!f[PROMPT_CWD].text || !f[PROMPT_TEXT].text || f[PROMPT_TEXT].n > PROMPT_MAX) return 0;
    h.cwd = f[PROMPT_CWD].at, h.cwd_n = f[PROMPT_CWD].n;
    WCHAR *record = passed_record(&h, L".prompt", L"KEEPER_LAUNCHER_PROMPT", L"KEEPER_LAUNCHER_KEY", &key);
    if (!record) return 0;

    WIN32_FILE_ATTRIBUTE_DATA written;
    DWORD size = 0, held_n, names_n;
    char *body = read_record(record, PROMPT_RECORD_MAX, &size, &written);
    if (!body) return 0;
    char *cursor = body, *stop = body + size;
    WCHAR *tag = line_at(&cursor, stop), *found = line_at(&cursor, stop), *tally = line_at(&cursor, stop);
    WCHAR *stats = line_at(&cursor, stop), *python = line_at(&cursor, stop), *claude = line_at(&cursor, stop);
    if (!claude || !is(tag, L"keeper-prompt 1") || !is(found, key)) return 0;
    Memory m = {0};
    if (!read_memory(&cursor, stop, &m)) return 0;
    const char *held = next_line(&cursor, stop, &held_n);
    WCHAR *folder = held ? line_at(&cursor, stop) : NULL;
    const char *names = folder ? next_line(&cursor, stop, &names_n) : NULL;
    if (!names || !settings_hold(&cursor, stop, written.ftLastWriteTime, 1)) return 0;
    if (!absolute(tally) || !plain_file(tally) || !absolute(stats) || !plain_file(stats) || !is_file(python)) return 0;
    WCHAR *config = env(L"CLAUDE_CONFIG_DIR"); /* Claude Code's folder, where its auto memory is */
    if (!is(claude, config ? config : L"")) return 0;
    m.held = spaced_words(held, held_n);
    if (!answers_nothing(f[PROMPT_TEXT].at, f[PROMPT_TEXT].n, &m)) return 0;
    if (m.mode_n == 4 && same_bytes(m.mode, "gate", 4) && !(absolute(folder) && lists_names(folder, names, names_n)))
        return 0; /* the session files the gate holds, as it listed them */
    long long place;
    if (!append_tally(tally, "p", &place)) return 0;
    append_hook_line(stats, L"user-prompt-submit");
    write_str(STD_OUTPUT_HANDLE, "{}");
    return 1;
}

/* ---- a hook through a keeper.exe pip, pipx or uv installed (issue 43) ---- */

/* The python.exe a keeper.exe pip or pipx wrote names, or NULL. Theirs is distlib's launcher: the
 * launcher, then the line "#!<python.exe>\r\n" (the path quoted when it holds a space, UTF-8), then a
 * small zip of its __main__.py, all within the file's last 4 KiB. */
static WCHAR *shebang_python(const WCHAR *keeper) {
    HANDLE h = CreateFileW(keeper, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, 0, NULL);
    if (h == INVALID_HANDLE_VALUE) return NULL;
    LARGE_INTEGER size, from;
    char *tail = alloc(4097);
    DWORD got = 0, n;
    if (GetFileSizeEx(h, &size)) {
        from.QuadPart = size.QuadPart > 4096 ? size.QuadPart - 4096 : 0;
        if (SetFilePointerEx(h, from, NULL, FILE_BEGIN))
            while (got < 4096 && ReadFile(h, tail + got, 4096 - got, &n, NULL) && n) got += n;
    }
    CloseHandle(h);
    DWORD end = 0, at;
    while (end + 6 <= got && !starts(tail + end, tail + got, "\r\nPK\3\4")) end++;
    for (at = end; at >= 2 && !(tail[at - 2] == '#' && tail[at - 1] == '!'); at--);
    if (end + 6 > got || at < 2) return NULL;
    if (end - at > 2 && tail[at] == '"' && tail[end - 1] == '"') at++, end--;
    for (DWORD i = at; i < end; i++)
        if ((unsigned char)tail[i] < 0x20 || tail[i] == '"') return NULL;
    Buf python = {0};
    add_utf8(&python, tail + at, end - at);
    return python.p;
}

/* pip's keeper.exe starts the environment's python.exe, which runs site and imports re before Keeper
 * does. When the python.exe its first line names (pip, pipx), or else the one beside it (uv's own
 * launcher), is a virtual environment's, in its Scripts folder, whose Lib\site-packages holds this
 * version of Keeper and its dependencies (pyproject.toml's), that python.exe runs the hook as path 1
 * does (-I -S, the folder given): one process and ~0.75x `python -c pass` fewer. On any doubt (another
 * layout or version; a command), or exit 75, NOT_RUN: keeper.exe runs as written. Twin of bin/keeper's
 * run_installed. */
static DWORD run_installed(const WCHAR *keeper, const WCHAR *bare, WCHAR **argv, int argc) {
    static const WCHAR *const needed[] = {L"keeper", L"claude_keeper-" KEEPER_VERSION L".dist-info", L"yaml",
                                          L"filelock", L"rapidfuzz", L"platformdirs"};
    WCHAR *python = bare == CODE_HOOK ? shebang_python(keeper) : NULL;
    if (bare == CODE_HOOK && !python && parent(keeper)) python = path_join(parent(keeper), L"python.exe");
    WCHAR *scripts = python ? parent(python) : NULL, *prefix = scripts ? parent(scripts) : NULL;
    if (!prefix || !same_text(base_name(scripts), L"Scripts") || !same_text(base_name(python), L"python.exe"))
        return NOT_RUN;
    WCHAR *site = path_join(prefix, L"Lib\\site-packages");
    if (!is_file(python) || !is_file(path_join(prefix, L"pyvenv.cfg"))) return NOT_RUN;
    for (unsigned i = 0; i < sizeof needed / sizeof *needed; i++)
        if (!is_dir(path_join(site, needed[i]))) return NOT_RUN;
    if (payload.taken && !payload.whole) return NOT_RUN; /* its rest is read as it is fed: to one child only */
    const WCHAR *fixed[] = {L"-I", L"-S", L"-c", bare, site};
    int taken = payload.taken; /* the payload read for the launcher's own answer: keeper.exe gets it on a 75 */
    DWORD code = run_waiting(python, command_line(quoted_program(python), fixed, 5, argv, argc, 1));
    if (code != NO_KEEPER) return code;
    payload.taken = taken;
    return NOT_RUN;
}

static DWORD launch(void) {
    int argc;
    WCHAR **argv = split_command_line(GetCommandLineW(), &argc);
    if (argc == 1 && env(L"CLAUDE_PLUGIN_ROOT") && GetFileType(GetStdHandle(STD_INPUT_HANDLE)) != FILE_TYPE_CHAR) {
        as_hook[0] = argv[0];
        as_hook[1] = L"hook";
        argv = as_hook;
        argc = 2;
    }
    int hook = argc > 1 && is(argv[1], L"hook");
    const WCHAR *event = argc > 2 ? argv[2] : L"";
    const WCHAR *bare = hook && !is(event, L"-h") && !is(event, L"--help") ? CODE_HOOK : CODE_BARE;

    /* 0. A tool use counted without Python (issue 33). */
    const WCHAR *named = NULL;
    int counting = argc == 3 && hook && (is(event, L"post-tool-use") || is(event, L"post-tool-use-failure"));
    if ((argc == 1 || (argc == 2 && hook)) && env(L"CLAUDE_PLUGIN_ROOT"))
        counting = GetFileType(GetStdHandle(STD_INPUT_HANDLE)) != FILE_TYPE_CHAR; /* Codex: no arguments */
    if (counting && count_without_python(argv, argc, &named)) return 0;
    if (argc == 3 && hook && is(event, L"stop") && stop_without_python()) return 0; /* a Stop with nothing new */
    if (argc == 3 && hook && is(event, L"user-prompt-submit") && prompt_without_python()) return 0; /* nothing to recall */
    if (named) { /* Python gets the event the payload named */
        WCHAR **given = argv;
        argv = alloc(4 * sizeof(WCHAR *));
        argv[0] = given[0], argv[1] = L"hook", argv[2] = (WCHAR *)named, argc = 3;
        hook = 1, event = named, bare = CODE_HOOK;
    }

    WCHAR *self = own_path();
    WCHAR *bin = parent(self), *root = NULL;
    if (bin && same_text(base_name(bin), L"bin")) root = parent(bin);
    if (!root) root = env(L"CLAUDE_PLUGIN_ROOT");
    if (!root) root = L".";

    /* 1. The plugin's own environment, built for exactly this code. */
    WCHAR *key = env_key(root);
    WCHAR *data = data_folder(key);
    DWORD code = run_env(data, key, bare, argv, argc);
    if (code != NOT_RUN) return code;

    /* 2. A keeper installed with pip, pipx or uv. */
    WCHAR *other = keeper_on_path(self, root);
    if (other) {
        SetEnvironmentVariableW(L"KEEPER_LAUNCHER_PASSED", L"1");
        code = run_installed(other, bare, argv, argc);
        if (code != NOT_RUN) return code;
        return run_waiting(other, command_line(quoted_program(other), NULL, 0, argv, argc, 1));
    }

    /* 3. Not set up yet. */
    Python py = {0};
    WCHAR *bootstrap = path_join(root, KEEPER_BOOTSTRAP);
    int have_python = find_python(&py, bootstrap);
    int session_start = hook && is(event, L"session-start");
    if (hook) {
        const char *reply = "{}";
        if (!have_python) {
            if (session_start) reply = MSG_NO_PYTHON;
        } else if (!data) {
            if (session_start) reply = MSG_NO_DATA;
        } else {
            if (argc == 2 || is(event, L"stop") || is(event, L"pre-compact") || is(event, L"session-end"))
                keep_hook(&py, root, data, event);
            if (session_start && !is_dir(path_join(data, L"setup.lock")) && has_earlier_env(data)) {
                run_setup(&py, root, data, SETUP_QUICK, NULL); /* an update: a copy of the earlier one */
                code = run_env(data, key, bare, argv, argc);
                if (code != NOT_RUN) return code;
            }
            if (session_start || !is_dir(path_join(data, L"setup.lock"))) run_setup(&py, root, data, SETUP_DETACHED, NULL);
            if (session_start) {
                reply = MSG_SETTING_UP;
                char *failed = first_line(path_join(data, L"setup-failed.json"));
                if (failed && *failed) reply = failed;
            }
        }
        write_str(STD_OUTPUT_HANDLE, reply);
        write_str(STD_OUTPUT_HANDLE, "\n");
        return 0;
    }
    if (!have_python) {
        write_str(STD_ERROR_HANDLE, ERR_NO_PYTHON);
        return 1;
    }
    if (!data) {
        WCHAR *config = env(L"CLAUDE_CONFIG_DIR");
        if (!config) {
            WCHAR *home = env(L"USERPROFILE");
            config = path_join(home ? home : L".", L".claude");
        }
        data = path_join(config, L"plugins\\data\\keeper-keeper");
    }
    code = 1;
    run_setup(&py, root, data, SETUP_FOREGROUND, &code);
    if (code != 0) return 1;
    code = run_env(data, key, bare, argv, argc);
    if (code != NOT_RUN) return code;
    write_str(STD_ERROR_HANDLE, "keeper: error: the environment Keeper set up cannot run it; see setup.log in ");
    write_wide(STD_ERROR_HANDLE, data);
    write_str(STD_ERROR_HANDLE, ", then run this again.\r\n");
    return 1;
}

void keeper_start(void) { ExitProcess(launch()); }
