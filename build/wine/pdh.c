/*
 * pdh.dll for Wine 8 test prefixes. The Windows kubelet reads node CPU,
 * memory and network figures through the Performance Data Helper
 * (k8s.io/kubernetes/pkg/kubelet/winstats over github.com/JeffAshton/win_pdh)
 * and refuses to start its stats when a counter cannot be added; Wine's
 * pdh.dll has only a few processor and system counters. This one serves
 * the counters the kubelet opens, from the host figures Wine does provide:
 *
 *   \Processor(_Total)\% Processor Time      GetSystemTimes, between samples
 *   \Process(_Total)\Working Set - Private   physical memory in use
 *                                            (GlobalMemoryStatusEx; Wine
 *                                            keeps no per-process figure)
 *   \Memory\Committed Bytes                  commit charge (total - available
 *                                            page file, GlobalMemoryStatusEx)
 *   \Network Adapter(*)\Packets Received/sec, Packets Sent/sec,
 *     Bytes Received/sec, Bytes Sent/sec       GetIfTable2, rate between
 *                                              samples
 *   \Network Adapter(*)\Packets Received Discarded, Packets Received Errors,
 *     Packets Outbound Discarded, Packets Outbound Errors   GetIfTable2
 *
 * Any other counter is refused with PDH_CSTATUS_NO_OBJECT or
 * PDH_CSTATUS_NO_COUNTER, as Windows refuses an unknown one. Rate counters
 * need two collections, as on Windows. For test prefixes only; Windows
 * ships the real DLL.
 */
#include <winsock2.h>
#include <ws2ipdef.h>
#include <windows.h>
#include <iphlpapi.h>
#include <netioapi.h>
#include <winperf.h>
#include <pdh.h>
#include <pdhmsg.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

enum kind { CPU_TOTAL, WORKING_SET_PRIVATE, COMMITTED_BYTES, NET };
enum net_field {
    PACKETS_RECEIVED, PACKETS_SENT, BYTES_RECEIVED, BYTES_SENT,
    RECEIVED_DISCARDED, RECEIVED_ERRORS, OUTBOUND_DISCARDED, OUTBOUND_ERRORS
};

static const struct known_counter {
    const WCHAR *object, *instance, *counter; /* instance NULL: none */
    enum kind kind;
    enum net_field field;
    BOOL rate;
    DWORD type;
} known[] = {
    { L"Processor", L"_Total", L"% Processor Time", CPU_TOTAL, 0, TRUE, PERF_100NSEC_TIMER_INV },
    { L"Process", L"_Total", L"Working Set - Private", WORKING_SET_PRIVATE, 0, FALSE, PERF_COUNTER_LARGE_RAWCOUNT },
    { L"Memory", NULL, L"Committed Bytes", COMMITTED_BYTES, 0, FALSE, PERF_COUNTER_LARGE_RAWCOUNT },
    { L"Network Adapter", L"*", L"Packets Received/sec", NET, PACKETS_RECEIVED, TRUE, PERF_COUNTER_BULK_COUNT },
    { L"Network Adapter", L"*", L"Packets Sent/sec", NET, PACKETS_SENT, TRUE, PERF_COUNTER_BULK_COUNT },
    { L"Network Adapter", L"*", L"Bytes Received/sec", NET, BYTES_RECEIVED, TRUE, PERF_COUNTER_BULK_COUNT },
    { L"Network Adapter", L"*", L"Bytes Sent/sec", NET, BYTES_SENT, TRUE, PERF_COUNTER_BULK_COUNT },
    { L"Network Adapter", L"*", L"Packets Received Discarded", NET, RECEIVED_DISCARDED, FALSE, PERF_COUNTER_RAWCOUNT },
    { L"Network Adapter", L"*", L"Packets Received Errors", NET, RECEIVED_ERRORS, FALSE, PERF_COUNTER_RAWCOUNT },
    { L"Network Adapter", L"*", L"Packets Outbound Discarded", NET, OUTBOUND_DISCARDED, FALSE, PERF_COUNTER_RAWCOUNT },
    { L"Network Adapter", L"*", L"Packets Outbound Errors", NET, OUTBOUND_ERRORS, FALSE, PERF_COUNTER_RAWCOUNT },
};

#define NAME_LEN 260

struct instance {
    WCHAR name[NAME_LEN];
    double raw;
};

/* One collection of a counter: a scalar (a; for the CPU, busy time a over
 * total time b) or, for network adapters, one raw value per adapter. */
struct sample {
    ULONGLONG time; /* 100 ns units */
    double a, b;
    struct instance *inst;
    DWORD count;
};

struct query;

struct counter {
    struct query *query;
    struct counter *next;
    const struct known_counter *def;
    WCHAR instance[NAME_LEN]; /* "*" or the one adapter asked for */
    int samples;              /* collections so far, at most 2 counted */
    struct sample prev, cur;
};

struct query {
    DWORD magic;
    struct counter *counters;
};

#define QUERY_MAGIC 0x50444851 /* "QHDP" */

static CRITICAL_SECTION lock;

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
    (void)inst;
    (void)reserved;
    if (reason == DLL_PROCESS_ATTACH)
        InitializeCriticalSection(&lock);
    return TRUE;
}

static struct query *get_query(PDH_HQUERY h)
{
    struct query *q = (struct query *)h;
    return q && q->magic == QUERY_MAGIC ? q : NULL;
}

static struct counter *get_counter(PDH_HCOUNTER h)
{
    struct counter *c = (struct counter *)h;
    struct counter *it;
    if (!c || !get_query(c->query))
        return NULL;
    for (it = c->query->counters; it; it = it->next)
        if (it == c)
            return c;
    return NULL;
}

/* parse_path finds the counter a path names: [\\machine]\object[(instance)]\counter,
 * compared without regard to case, as PDH does. */
static PDH_STATUS parse_path(LPCWSTR path, const struct known_counter **def, WCHAR *instance)
{
    WCHAR object[NAME_LEN], inst[NAME_LEN], name[NAME_LEN];
    const WCHAR *p = path, *end;
    size_t i, n;
    BOOL object_known = FALSE;

    if (!path)
        return PDH_INVALID_ARGUMENT;
    if (p[0] == L'\\' && p[1] == L'\\') { /* a machine name: only this one */
        p = wcschr(p + 2, L'\\');
        if (!p)
            return PDH_CSTATUS_BAD_COUNTERNAME;
    }
    if (*p++ != L'\\')
        return PDH_CSTATUS_BAD_COUNTERNAME;
    end = wcschr(p, L'\\');
    if (!end || !end[1])
        return PDH_CSTATUS_BAD_COUNTERNAME;
    n = (size_t)(end - p);
    if (n >= NAME_LEN)
        return PDH_CSTATUS_BAD_COUNTERNAME;
    memcpy(object, p, n * sizeof(WCHAR));
    object[n] = 0;
    inst[0] = 0;
    if (n > 0 && object[n - 1] == L')') {
        WCHAR *open = wcschr(object, L'(');
        if (!open)
            return PDH_CSTATUS_BAD_COUNTERNAME;
        object[n - 1] = 0;
        wcscpy(inst, open + 1);
        *open = 0;
    }
    if (wcslen(end + 1) >= NAME_LEN)
        return PDH_CSTATUS_BAD_COUNTERNAME;
    wcscpy(name, end + 1);

    for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        const struct known_counter *k = &known[i];
        if (_wcsicmp(k->object, object))
            continue;
        object_known = TRUE;
        if (_wcsicmp(k->counter, name))
            continue;
        if (!k->instance) {
            if (inst[0])
                return PDH_CSTATUS_NO_INSTANCE;
        } else if (k->kind == NET) {
            if (!inst[0])
                return PDH_CSTATUS_NO_INSTANCE;
        } else if (_wcsicmp(k->instance, inst)) {
            return PDH_CSTATUS_NO_INSTANCE;
        }
        *def = k;
        if (instance)
            wcscpy(instance, inst[0] ? inst : L"");
        return ERROR_SUCCESS;
    }
    return object_known ? PDH_CSTATUS_NO_COUNTER : PDH_CSTATUS_NO_OBJECT;
}

/* adapter_name turns an interface description into a Network Adapter
 * instance name, with the characters Windows replaces in those names. */
static void adapter_name(const WCHAR *description, WCHAR *out)
{
    size_t i;
    for (i = 0; description[i] && i < NAME_LEN - 1; i++) {
        WCHAR ch = description[i];
        out[i] = ch == L'(' ? L'[' : ch == L')' ? L']' : (ch == L'#' || ch == L'/' || ch == L'\\') ? L'_' : ch;
    }
    out[i] = 0;
}

static double net_value(const MIB_IF_ROW2 *row, enum net_field field)
{
    switch (field) {
    case PACKETS_RECEIVED: return (double)(row->InUcastPkts + row->InNUcastPkts);
    case PACKETS_SENT: return (double)(row->OutUcastPkts + row->OutNUcastPkts);
    case BYTES_RECEIVED: return (double)row->InOctets;
    case BYTES_SENT: return (double)row->OutOctets;
    case RECEIVED_DISCARDED: return (double)row->InDiscards;
    case RECEIVED_ERRORS: return (double)row->InErrors;
    case OUTBOUND_DISCARDED: return (double)row->OutDiscards;
    case OUTBOUND_ERRORS: return (double)row->OutErrors;
    }
    return 0;
}

/* sample_net collects one value per adapter. Windows lists no loopback
 * adapter; the loopback one is reported only when it is the only one, since
 * the kubelet drops all its node figures of a period when one counter
 * returns nothing. */
static PDH_STATUS sample_net(struct counter *c, struct sample *s)
{
    MIB_IF_TABLE2 *table = NULL;
    ULONG i;
    int pass;

    if (GetIfTable2(&table) != NO_ERROR)
        return PDH_CSTATUS_NO_INSTANCE;
    s->inst = calloc(table->NumEntries ? table->NumEntries : 1, sizeof(*s->inst));
    if (!s->inst) {
        FreeMibTable(table);
        return PDH_MEMORY_ALLOCATION_FAILURE;
    }
    s->count = 0;
    for (pass = 0; pass < 2 && s->count == 0; pass++) {
        for (i = 0; i < table->NumEntries; i++) {
            const MIB_IF_ROW2 *row = &table->Table[i];
            struct instance *in = &s->inst[s->count];
            DWORD j;
            BOOL duplicate = FALSE;
            if ((row->Type == IF_TYPE_SOFTWARE_LOOPBACK) != (pass == 1))
                continue;
            adapter_name(row->Description[0] ? row->Description : row->Alias, in->name);
            if (wcscmp(c->instance, L"*") && _wcsicmp(c->instance, in->name))
                continue;
            for (j = 0; j < s->count; j++)
                if (!wcscmp(s->inst[j].name, in->name))
                    duplicate = TRUE;
            if (duplicate)
                continue;
            in->raw = net_value(row, c->def->field);
            s->count++;
        }
    }
    FreeMibTable(table);
    return ERROR_SUCCESS;
}

static PDH_STATUS take_sample(struct counter *c, struct sample *s)
{
    MEMORYSTATUSEX mem;
    FILETIME idle, kernel, user, now;

    memset(s, 0, sizeof(*s));
    GetSystemTimeAsFileTime(&now);
    s->time = ((ULONGLONG)now.dwHighDateTime << 32) | now.dwLowDateTime;
    switch (c->def->kind) {
    case CPU_TOTAL:
        if (!GetSystemTimes(&idle, &kernel, &user))
            return PDH_CSTATUS_INVALID_DATA;
        /* Kernel time includes idle time. */
        s->b = (double)(((ULONGLONG)kernel.dwHighDateTime << 32) | kernel.dwLowDateTime) +
               (double)(((ULONGLONG)user.dwHighDateTime << 32) | user.dwLowDateTime);
        s->a = s->b - (double)(((ULONGLONG)idle.dwHighDateTime << 32) | idle.dwLowDateTime);
        return ERROR_SUCCESS;
    case WORKING_SET_PRIVATE:
    case COMMITTED_BYTES:
        mem.dwLength = sizeof(mem);
        if (!GlobalMemoryStatusEx(&mem))
            return PDH_CSTATUS_INVALID_DATA;
        s->a = c->def->kind == WORKING_SET_PRIVATE ? (double)(mem.ullTotalPhys - mem.ullAvailPhys)
                                                   : (double)(mem.ullTotalPageFile - mem.ullAvailPageFile);
        return ERROR_SUCCESS;
    case NET:
        return sample_net(c, s);
    }
    return PDH_CSTATUS_INVALID_DATA;
}

/* scalar_value formats a counter without instances. */
static PDH_STATUS scalar_value(const struct counter *c, double *v)
{
    if (c->def->kind != CPU_TOTAL) {
        if (c->samples < 1)
            return PDH_INVALID_DATA;
        *v = c->cur.a;
        return ERROR_SUCCESS;
    }
    if (c->samples < 2)
        return PDH_INVALID_DATA;
    *v = c->cur.b > c->prev.b ? 100.0 * (c->cur.a - c->prev.a) / (c->cur.b - c->prev.b) : 0.0;
    if (*v < 0)
        *v = 0;
    if (*v > 100)
        *v = 100;
    return ERROR_SUCCESS;
}

/* instance_value formats one adapter's value of a network counter. */
static double instance_value(const struct counter *c, DWORD i)
{
    const struct instance *in = &c->cur.inst[i];
    double seconds;
    DWORD j;
    if (!c->def->rate)
        return in->raw;
    seconds = (double)(c->cur.time - c->prev.time) / 1e7;
    for (j = 0; j < c->prev.count; j++)
        if (!wcscmp(c->prev.inst[j].name, in->name))
            return seconds > 0 && in->raw >= c->prev.inst[j].raw ? (in->raw - c->prev.inst[j].raw) / seconds : 0.0;
    return 0.0; /* a new adapter: no rate yet */
}

static PDH_STATUS format(double v, DWORD fmt, PDH_FMT_COUNTERVALUE *out)
{
    out->CStatus = PDH_CSTATUS_VALID_DATA;
    if (fmt & PDH_FMT_DOUBLE)
        out->doubleValue = v;
    else if (fmt & PDH_FMT_LARGE)
        out->largeValue = (LONGLONG)v;
    else if (fmt & PDH_FMT_LONG)
        out->longValue = (LONG)v;
    else
        return PDH_INVALID_ARGUMENT;
    return ERROR_SUCCESS;
}

PDH_STATUS WINAPI PdhOpenQueryW(LPCWSTR source, DWORD_PTR user_data, PDH_HQUERY *query)
{
    struct query *q;
    (void)user_data;
    if (!query)
        return PDH_INVALID_ARGUMENT;
    if (source && source[0]) /* log files are not served */
        return PDH_INVALID_DATASOURCE;
    q = calloc(1, sizeof(*q));
    if (!q)
        return PDH_MEMORY_ALLOCATION_FAILURE;
    q->magic = QUERY_MAGIC;
    *query = q;
    return ERROR_SUCCESS;
}

PDH_STATUS WINAPI PdhAddEnglishCounterW(PDH_HQUERY query, LPCWSTR path, DWORD_PTR user_data, PDH_HCOUNTER *counter)
{
    const struct known_counter *def;
    struct counter *c;
    struct query *q;
    PDH_STATUS ret;
    (void)user_data;

    if (!counter)
        return PDH_INVALID_ARGUMENT;
    EnterCriticalSection(&lock);
    q = get_query(query);
    if (!q) {
        LeaveCriticalSection(&lock);
        return PDH_INVALID_HANDLE;
    }
    c = calloc(1, sizeof(*c));
    if (!c) {
        LeaveCriticalSection(&lock);
        return PDH_MEMORY_ALLOCATION_FAILURE;
    }
    ret = parse_path(path, &def, c->instance);
    if (ret != ERROR_SUCCESS) {
        free(c);
        LeaveCriticalSection(&lock);
        return ret;
    }
    c->def = def;
    c->query = q;
    c->next = q->counters;
    q->counters = c;
    *counter = c;
    LeaveCriticalSection(&lock);
    return ERROR_SUCCESS;
}

/* The counter names here are the English ones whatever the locale. */
PDH_STATUS WINAPI PdhAddCounterW(PDH_HQUERY query, LPCWSTR path, DWORD_PTR user_data, PDH_HCOUNTER *counter)
{
    return PdhAddEnglishCounterW(query, path, user_data, counter);
}

PDH_STATUS WINAPI PdhValidatePathW(LPCWSTR path)
{
    const struct known_counter *def;
    return parse_path(path, &def, NULL);
}

PDH_STATUS WINAPI PdhCollectQueryData(PDH_HQUERY query)
{
    struct query *q;
    struct counter *c;
    PDH_STATUS ret = ERROR_SUCCESS;

    EnterCriticalSection(&lock);
    q = get_query(query);
    if (!q) {
        LeaveCriticalSection(&lock);
        return PDH_INVALID_HANDLE;
    }
    if (!q->counters) {
        LeaveCriticalSection(&lock);
        return PDH_NO_DATA;
    }
    for (c = q->counters; c; c = c->next) {
        struct sample s;
        PDH_STATUS r = take_sample(c, &s);
        if (r != ERROR_SUCCESS) {
            free(s.inst);
            ret = r;
            continue;
        }
        free(c->prev.inst);
        c->prev = c->cur;
        c->cur = s;
        if (c->samples < 2)
            c->samples++;
    }
    LeaveCriticalSection(&lock);
    return ret;
}

PDH_STATUS WINAPI PdhGetFormattedCounterValue(PDH_HCOUNTER counter, DWORD fmt, LPDWORD type, PPDH_FMT_COUNTERVALUE value)
{
    struct counter *c;
    PDH_STATUS ret;
    double v = 0;

    if (!value)
        return PDH_INVALID_ARGUMENT;
    EnterCriticalSection(&lock);
    c = get_counter(counter);
    if (!c) {
        LeaveCriticalSection(&lock);
        return PDH_INVALID_HANDLE;
    }
    if (type)
        *type = c->def->type;
    if (c->def->kind == NET) {
        /* One value per adapter: PdhGetFormattedCounterArray reads these. */
        ret = PDH_INVALID_ARGUMENT;
    } else {
        ret = scalar_value(c, &v);
    }
    if (ret == ERROR_SUCCESS)
        ret = format(v, fmt, value);
    else
        value->CStatus = PDH_CSTATUS_INVALID_DATA;
    LeaveCriticalSection(&lock);
    return ret;
}

/* PdhGetFormattedCounterArrayW fills the buffer with the items followed by
 * their names, as Windows does; a buffer too small for them (the first,
 * sizing call) gets PDH_MORE_DATA and the size and count needed. */
PDH_STATUS WINAPI PdhGetFormattedCounterArrayW(PDH_HCOUNTER counter, DWORD fmt, LPDWORD size, LPDWORD count,
                                               PPDH_FMT_COUNTERVALUE_ITEM_W items)
{
    struct counter *c;
    PDH_STATUS ret = ERROR_SUCCESS;
    DWORD n, i, need;
    const WCHAR *scalar_name = L"";
    WCHAR *names;
    double v = 0;

    if (!size || !count)
        return PDH_INVALID_ARGUMENT;
    EnterCriticalSection(&lock);
    c = get_counter(counter);
    if (!c) {
        LeaveCriticalSection(&lock);
        return PDH_INVALID_HANDLE;
    }
    if (c->def->kind == NET) {
        if (c->samples < (c->def->rate ? 2 : 1)) {
            LeaveCriticalSection(&lock);
            return PDH_INVALID_DATA;
        }
        n = c->cur.count;
        if (n == 0) {
            LeaveCriticalSection(&lock);
            return PDH_CSTATUS_NO_INSTANCE;
        }
    } else {
        ret = scalar_value(c, &v);
        if (ret != ERROR_SUCCESS) {
            LeaveCriticalSection(&lock);
            return ret;
        }
        n = 1;
        if (c->def->instance)
            scalar_name = c->def->instance;
    }

    need = n * sizeof(PDH_FMT_COUNTERVALUE_ITEM_W);
    for (i = 0; i < n; i++)
        need += (DWORD)((wcslen(c->def->kind == NET ? c->cur.inst[i].name : scalar_name) + 1) * sizeof(WCHAR));
    if (!items || *size < need) {
        *size = need;
        *count = n;
        LeaveCriticalSection(&lock);
        return PDH_MORE_DATA;
    }

    names = (WCHAR *)(items + n);
    for (i = 0; i < n && ret == ERROR_SUCCESS; i++) {
        const WCHAR *name = c->def->kind == NET ? c->cur.inst[i].name : scalar_name;
        wcscpy(names, name);
        items[i].szName = names;
        names += wcslen(name) + 1;
        ret = format(c->def->kind == NET ? instance_value(c, i) : v, fmt, &items[i].FmtValue);
    }
    *size = need;
    *count = n;
    LeaveCriticalSection(&lock);
    return ret;
}

PDH_STATUS WINAPI PdhRemoveCounter(PDH_HCOUNTER counter)
{
    struct counter *c, **it;

    EnterCriticalSection(&lock);
    c = get_counter(counter);
    if (!c) {
        LeaveCriticalSection(&lock);
        return PDH_INVALID_HANDLE;
    }
    for (it = &c->query->counters; *it; it = &(*it)->next) {
        if (*it == c) {
            *it = c->next;
            break;
        }
    }
    free(c->prev.inst);
    free(c->cur.inst);
    free(c);
    LeaveCriticalSection(&lock);
    return ERROR_SUCCESS;
}

PDH_STATUS WINAPI PdhCloseQuery(PDH_HQUERY query)
{
    struct query *q;

    EnterCriticalSection(&lock);
    q = get_query(query);
    if (!q) {
        LeaveCriticalSection(&lock);
        return PDH_INVALID_HANDLE;
    }
    while (q->counters) {
        struct counter *c = q->counters;
        q->counters = c->next;
        free(c->prev.inst);
        free(c->cur.inst);
        free(c);
    }
    q->magic = 0;
    free(q);
    LeaveCriticalSection(&lock);
    return ERROR_SUCCESS;
}
