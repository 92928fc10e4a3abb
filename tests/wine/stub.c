/* A stand-in Windows program for the launcher's tests under Wine (python.exe, py.exe, keeper.exe).
 *
 * Each run records what it received beside itself, in <exe>.calls/<n>.argv (its arguments as the
 * C runtime split them, UTF-8, each followed by a NUL byte), <n>.env (KEEPER_COUNTER, KEEPER_COUNTER_KEY,
 * KEEPER_COUNTED, KEEPER_LAUNCHER_STOP, KEEPER_LAUNCHER_PROMPT and KEEPER_LAUNCHER_KEY when set, as NAME=value, each
 * followed by a NUL byte) and <n>.stdin (the bytes it read), then
 * answers as told by files beside it:
 *   - asked the launcher's Python probe (-c "...version_info >= (3, 9)..." FILE), it prints FILE's
 *     size, as a real Python 3.9+ would, unless <exe>.fake exists (then it acts as the Microsoft
 *     Store's stub: a message and exit 9009);
 *   - <exe>.out: bytes to print; without it, it prints what it read on stdin;
 *   - <exe>.code: its exit code (default 0);
 *   - <exe>.then: a path to copy itself to (a set-up that makes the environment's python.exe);
 *   - <exe>.sleep: milliseconds to wait before answering (a slow set-up).
 * Run as the set-up (an argument ending in bootstrap.py), it leaves stdin alone, as the real one does,
 * unless it keeps a hook (--keep): then it reads the payload.
 * Built by the tests with x86_64-w64-mingw32-gcc -municode. */

#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>
#include <windows.h>

static wchar_t *beside(const wchar_t *self, const wchar_t *suffix) {
    size_t n = wcslen(self) + wcslen(suffix) + 1;
    wchar_t *p = malloc(n * sizeof(wchar_t));
    swprintf(p, n, L"%ls%ls", self, suffix);
    return p;
}

static char *slurp(const wchar_t *path, DWORD *size) {
    HANDLE h = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, 0, NULL);
    if (h == INVALID_HANDLE_VALUE) return NULL;
    DWORD n = GetFileSize(h, NULL), got = 0;
    char *buf = malloc(n + 1);
    ReadFile(h, buf, n, &got, NULL);
    CloseHandle(h);
    buf[got] = 0;
    *size = got;
    return buf;
}

static void put(HANDLE h, const char *bytes, DWORD n) {
    DWORD done;
    while (n && WriteFile(h, bytes, n, &done, NULL) && done) bytes += done, n -= done;
}

int wmain(int argc, wchar_t **argv) {
    wchar_t self[4096];
    GetModuleFileNameW(NULL, self, 4096);
    wchar_t *calls = beside(self, L".calls");
    CreateDirectoryW(calls, NULL);

    HANDLE record = INVALID_HANDLE_VALUE;
    wchar_t path[4200];
    int k;
    for (k = 0; record == INVALID_HANDLE_VALUE && k < 1000; k++) {
        swprintf(path, 4200, L"%ls\\%d.argv", calls, k);
        record = CreateFileW(path, GENERIC_WRITE, 0, NULL, CREATE_NEW, 0, NULL);
    }
    k--;
    for (int i = 0; i < argc; i++) {
        char utf8[8192];
        int n = WideCharToMultiByte(CP_UTF8, 0, argv[i], -1, utf8, sizeof utf8, NULL, NULL);
        put(record, utf8, (DWORD)n); /* n counts the NUL */
    }
    CloseHandle(record);
    swprintf(path, 4200, L"%ls\\%d.env", calls, k); /* the variables keeper.exe passes to Keeper (issue 33) */
    record = CreateFileW(path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, 0, NULL);
    const wchar_t *names[] = {L"KEEPER_COUNTER",       L"KEEPER_COUNTER_KEY",     L"KEEPER_COUNTED",
                              L"KEEPER_LAUNCHER_STOP", L"KEEPER_LAUNCHER_PROMPT", L"KEEPER_LAUNCHER_KEY"};
    for (int i = 0; i < 6; i++) {
        wchar_t value[8192], line[8400];
        if (!GetEnvironmentVariableW(names[i], value, 8192)) continue;
        char utf8[32768];
        swprintf(line, 8400, L"%ls=%ls", names[i], value);
        int n = WideCharToMultiByte(CP_UTF8, 0, line, -1, utf8, sizeof utf8, NULL, NULL);
        put(record, utf8, (DWORD)n);
    }
    CloseHandle(record);

    int probe = argc >= 4 && wcscmp(argv[argc - 3], L"-c") == 0 && wcsstr(argv[argc - 2], L"version_info >= (3, 9)");
    HANDLE out = GetStdHandle(STD_OUTPUT_HANDLE);
    DWORD size;
    if (probe) {
        if (GetFileAttributesW(beside(self, L".fake")) != INVALID_FILE_ATTRIBUTES) {
            const char *msg = "Python was not found; run without arguments to install from the Microsoft Store\r\n";
            put(out, msg, (DWORD)strlen(msg));
            return 9009;
        }
        WIN32_FILE_ATTRIBUTE_DATA info;
        if (!GetFileAttributesExW(argv[argc - 1], GetFileExInfoStandard, &info)) return 1;
        char text[32];
        sprintf(text, "%lu", (unsigned long)info.nFileSizeLow);
        put(out, text, (DWORD)strlen(text));
        return 0;
    }

    int setup = 0;
    for (int i = 1; i < argc; i++) {
        size_t len = wcslen(argv[i]);
        if (len >= 12 && wcscmp(argv[i] + len - 12, L"bootstrap.py") == 0) setup = 1;
    }
    for (int i = 1; i < argc; i++)
        if (wcscmp(argv[i], L"--keep") == 0) setup = 0;
    char *input = malloc(1 << 20);
    DWORD got = 0, n;
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
    while (!setup && got < (1 << 20) && ReadFile(in, input + got, (1 << 20) - got, &n, NULL) && n) got += n;
    swprintf(path, 4200, L"%ls\\%d.stdin", calls, k);
    HANDLE saved = CreateFileW(path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, 0, NULL);
    put(saved, input, got);
    CloseHandle(saved);

    char *reply = slurp(beside(self, L".out"), &size);
    if (reply)
        put(out, reply, size);
    else
        put(out, input, got);

    char *then = slurp(beside(self, L".then"), &size);
    if (then) {
        wchar_t target[4096];
        int len = MultiByteToWideChar(CP_UTF8, 0, then, (int)size, target, 4095);
        target[len] = 0;
        CopyFileW(self, target, FALSE);
    }
    char *sleep = slurp(beside(self, L".sleep"), &size);
    if (sleep) Sleep((DWORD)atoi(sleep));
    char *code = slurp(beside(self, L".code"), &size);
    return code ? atoi(code) : 0;
}
