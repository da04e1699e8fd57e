/* The reader of breakwater's JSON event lines (docs/events.md) for
 * `breakwater alert`: the one parser of outside input in that command. The
 * line is hostile until proven otherwise: it is parsed as strict JSON
 * (RFC 8259: well-formed UTF-8, no raw control characters, escapes checked,
 * numbers by the grammar, nesting at most 32 deep), and only then are
 * `event`, `name` and `ts` read from it. No dependency but the C library;
 * fuzzed by fuzz/fuzz_event_json.c. */
#ifndef BW_TOOLS_EVENT_JSON_H
#define BW_TOOLS_EVENT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest line read, in bytes (a breakwater line is far shorter). */
#define BW_EVENT_LINE_MAX 65536
/* Longest event name and object name kept, in bytes. */
#define BW_EVENT_LINE_EVENT_MAX 63
#define BW_EVENT_LINE_NAME_MAX 200

typedef struct bw_event_line_s {
  char event[BW_EVENT_LINE_EVENT_MAX + 1]; /* "circuit_opened" */
  char name[BW_EVENT_LINE_NAME_MAX + 1];   /* the object's name, decoded */
  int64_t wall_ns; /* ts as ns since the Unix epoch (whole ms) */
} bw_event_line_t;

/* Parses one line (len bytes without its newline; need not be
 * NUL-terminated; a trailing CR is allowed). Returns 0 with *out filled, or
 * -1 with a sentence in err (always NUL-terminated when err_size > 0) naming
 * the byte offset or the key and the rule: not JSON, not an object, a
 * missing or non-string event / name / ts, one of them twice, a name or
 * event too long or holding U+0000, a ts not in the form
 * 2026-08-07T14:12:03.418Z (a real UTC date and time, years
 * BW_EVENT_LINE_YEAR_MIN..MAX), a
 * line longer than BW_EVENT_LINE_MAX. On error *out is unspecified. */
int bw_event_line_parse(const char *line, size_t len, bw_event_line_t *out,
                        char *err, size_t err_size);

/* The years a ts may have: those whose every instant fits in int64
 * nanoseconds since the epoch (which ends in April 2262). */
#define BW_EVENT_LINE_YEAR_MIN 1678
#define BW_EVENT_LINE_YEAR_MAX 2261

/* ns since the Unix epoch of "YYYY-MM-DDTHH:MM:SS.mmmZ" (exactly 24
 * bytes); false when it is not such a valid UTC date and time, or its year
 * is outside BW_EVENT_LINE_YEAR_MIN..MAX. */
bool bw_event_line_ts(const char *s, size_t len, int64_t *ns);

#endif
