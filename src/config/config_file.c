/* breakwater — configuration files (breakwater/config_file.h): an INI
 * dialect read with inih, turned into effective configurations through the
 * core's configuration by name, and made into registry objects.
 *
 * Three passes, so that an error anywhere leaves nothing behind:
 * 1. parse: inih reads key = value lines; our reader feeds it one line at
 *    a time, counting lines (Debian's inih does not pass the line number to
 *    the handler), and reads the section headers itself, so that empty
 *    sections and duplicates are seen. Each value is checked on its own
 *    (bw_config_set on a scratch struct) at its line.
 * 2. resolve: every object's effective struct (init, [KIND.default], its
 *    section, the environment), validated as a whole; references (a
 *    retry's budget, a pipeline's strategies) checked.
 * 3. apply: names checked to be new in the registry, then the objects made.
 */
#include "breakwater/config_file.h"

#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "breakwater/ext.h"
#include "breakwater/http_standard.h"

#define MAX_FILE_BYTES (1024 * 1024)
#define MAX_INSTANCE 40
/* Sections in a file: lookups by name are linear, so this bounds the work a
 * hostile file can cause (quadratic in it) to well under a second. */
#define MAX_SECTIONS 4096

/* ---- kinds a section may name ------------------------------------------ */

#define PIPELINE (-1)

typedef struct kind_s {
  const char *name;
  int ck; /* bw_config_kind_t, or PIPELINE */
  bw_registry_kind_t rk;
} kind_t;

/* In the order objects are made: what a later kind points at comes first. */
static const kind_t kinds[] = {
    {"budget", BW_CONFIG_BUDGET, BW_REGISTRY_BUDGET},
    {"retry", BW_CONFIG_RETRY, BW_REGISTRY_RETRY},
    {"breaker", BW_CONFIG_BREAKER, BW_REGISTRY_BREAKER},
    {"bulkhead", BW_CONFIG_BULKHEAD, BW_REGISTRY_BULKHEAD},
    {"limiter", BW_CONFIG_LIMITER, BW_REGISTRY_LIMITER},
    {"ratelimit", BW_CONFIG_RATELIMIT, BW_REGISTRY_RATELIMIT},
    {"throttle", BW_CONFIG_THROTTLE, BW_REGISTRY_THROTTLE},
    {"priority_queue", BW_CONFIG_PRIORITY_QUEUE, BW_REGISTRY_QUEUE},
    {"stage", BW_CONFIG_STAGE, BW_REGISTRY_STAGE},
    {"degrade", BW_CONFIG_DEGRADE, BW_REGISTRY_DEGRADE},
    /* The standard HTTP preset: its parts and its pipeline, all named by the
     * section (make_http); found in the registry by its pipeline. */
    {"http", BW_CONFIG_HTTP, BW_REGISTRY_PIPELINE},
    {"pipeline", PIPELINE, BW_REGISTRY_PIPELINE},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static const char kind_list[] =
    "breaker, retry, budget, bulkhead, limiter, "
    "ratelimit, throttle, priority_queue, stage, degrade, "
    "http, pipeline";

/* Any kind's config struct, aligned for all (as tools/cmd_config.c). */
typedef union any_config_u {
  long double ld;
  void *p;
  unsigned char bytes[1024];
} any_config_t;

/* ---- the parsed file ---------------------------------------------------- */

typedef struct entry_s {
  char *key;
  char *value;
  unsigned line;
} entry_t;

enum { ITEM_DEADLINE, ITEM_TIMEOUT, ITEM_OBJECT };

typedef struct item_s {
  int type;
  int64_t ms;      /* DEADLINE, TIMEOUT */
  size_t ref;      /* OBJECT: the section */
  bool has_wait;   /* OBJECT: "wait D" given */
  int64_t wait_ms; /* OBJECT */
} item_t;

typedef struct section_s {
  size_t kind; /* index in kinds[] */
  char name[MAX_INSTANCE + 1];
  unsigned line;
  bool is_default;
  entry_t *e;
  size_t n, cap;
  any_config_t *cfg; /* resolved (objects only; not pipelines) */
  bool has_budget;   /* retry: budget = NAME */
  size_t budget_ref; /* its section */
  item_t items[BW_PIPELINE_MAX_STRATEGIES]; /* pipeline */
  uint32_t nitems;
  int64_t min_attempt_ms; /* pipeline: its min_attempt_ms key, 0 if unset */
} section_t;

struct bw_config_file_s {
  char *file; /* the name in messages */
  section_t *s;
  size_t n, cap;
  size_t *objs; /* indices of the object sections, in file order */
  size_t nobjs;
  /* The same indices by kind, in the kinds table's order (file order
   * within a kind): the order objects are made in, so that a section's
   * references (a retry's budget, a pipeline's objects) exist first. */
  size_t *by_kind;
};

/* ---- diagnostics -------------------------------------------------------- */

static int diag_set(bw_config_diag_t *d, const char *file, int code,
                    unsigned line, const char *key, const char *fmt, ...)
    BW_PRINTF_LIKE(6, 7);

static int diag_set(bw_config_diag_t *d, const char *file, int code,
                    unsigned line, const char *key, const char *fmt, ...) {
  va_list ap;
  char where[64] = "";
  if (d == NULL) return code;
  d->code = code;
  d->line = line;
  snprintf(d->key, sizeof d->key, "%s", key != NULL ? key : "");
  va_start(ap, fmt);
  vsnprintf(d->rule, sizeof d->rule, fmt, ap);
  va_end(ap);
  if (line > 0) snprintf(where, sizeof where, ":%u", line);
  snprintf(d->message, sizeof d->message, "%s%s: %s%s%s",
           file != NULL ? file : "(null)", where, d->key,
           d->key[0] != '\0' ? ": " : "", d->rule);
  return code;
}

static void diag_clear(bw_config_diag_t *d) {
  if (d != NULL) memset(d, 0, sizeof *d);
}

/* ---- small helpers ------------------------------------------------------ */

static bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* Copies as much of src as fits, NUL-terminated. */
static void copy_trunc(char *dst, size_t size, const char *src) {
  size_t n = strlen(src);
  if (n >= size) n = size - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static bool is_space(char c) {
  return c == ' ' || c == '\t';
}

static int kind_find(const char *s, size_t len) {
  for (size_t i = 0; i < NKINDS; i++)
    if (strlen(kinds[i].name) == len && memcmp(kinds[i].name, s, len) == 0)
      return (int)i;
  return -1;
}

static const char *sec_kind(const section_t *s) {
  return kinds[s->kind].name;
}

static int find_section(const bw_config_file_t *f, size_t kind,
                        const char *name) {
  for (size_t i = 0; i < f->n; i++)
    if (f->s[i].kind == kind && strcmp(f->s[i].name, name) == 0) return (int)i;
  return -1;
}

static const entry_t *find_entry(const section_t *s, const char *key) {
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->e[i].key, key) == 0) return &s->e[i];
  return NULL;
}

void bw_config_file_options_init(bw_config_file_options_t *opt) {
  if (opt == NULL) return;
  memset(opt, 0, sizeof *opt);
  opt->env_prefix = "BREAKWATER";
}

void bw_config_file_free(bw_config_file_t *f) {
  if (f == NULL) return;
  for (size_t i = 0; i < f->n; i++) {
    for (size_t j = 0; j < f->s[i].n; j++) {
      bw_free(f->s[i].e[j].key);
      bw_free(f->s[i].e[j].value);
    }
    bw_free(f->s[i].e);
    bw_free(f->s[i].cfg);
  }
  bw_free(f->s);
  bw_free(f->objs);
  bw_free(f->by_kind);
  bw_free(f->file);
  bw_free(f);
}

/* ---- pass 1: parse ------------------------------------------------------ */

typedef struct parse_s {
  const char *text;
  size_t len, pos;
  unsigned line; /* the line last handed to inih */
  bw_config_file_t *f;
  bw_config_diag_t *diag;
  bool failed;
  unsigned fail_line;
  int cur; /* the current section, -1 before the first */
  any_config_t scratch;
} parse_t;

static int parse_fail(parse_t *p, int code, const char *key, const char *fmt,
                      ...) BW_PRINTF_LIKE(4, 5);

static int parse_fail(parse_t *p, int code, const char *key, const char *fmt,
                      ...) {
  char rule[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rule, sizeof rule, fmt, ap);
  va_end(ap);
  p->failed = true;
  p->fail_line = p->line;
  diag_set(p->diag, p->f->file, code, p->line, key, "%s", rule);
  return 0;
}

/* A section header, the text between '[' and ']': KIND.NAME. */
static int section_begin(parse_t *p, const char *name, size_t len) {
  char shown[96];
  const char *dot = memchr(name, '.', len);
  snprintf(shown, sizeof shown, "[%.*s]", (int)(len > 80 ? 80 : len), name);
  if (dot == NULL)
    return parse_fail(p, BW_E_INVAL, shown,
                      "a section is [KIND.NAME] (KIND one of %s)", kind_list);
  int k = kind_find(name, (size_t)(dot - name));
  if (k < 0)
    return parse_fail(
        p, BW_E_NOTFOUND, shown, "unknown kind '%.*s' (kinds: %s)",
        (int)(dot - name > 32 ? 32 : dot - name), name, kind_list);
  const char *inst = dot + 1;
  size_t ilen = len - (size_t)(inst - name);
  if (ilen == 0 || ilen > MAX_INSTANCE)
    return parse_fail(p, BW_E_INVAL, shown,
                      "the name after '%s.' must be 1 to %d bytes",
                      kinds[k].name, MAX_INSTANCE);
  for (size_t i = 0; i < ilen; i++)
    if (!is_name_char(inst[i]))
      return parse_fail(p, BW_E_INVAL, shown,
                        "a name is letters, digits, '_' and '-' only");
  bool is_default = ilen == 7 && memcmp(inst, "default", 7) == 0;
  if (is_default && kinds[k].ck == PIPELINE)
    return parse_fail(p, BW_E_INVAL, shown,
                      "pipelines have no defaults: each names its strategies");
  char inst_z[MAX_INSTANCE + 1];
  memcpy(inst_z, inst, ilen);
  inst_z[ilen] = '\0';
  int prev = find_section(p->f, (size_t)k, inst_z);
  if (prev >= 0)
    return parse_fail(p, BW_E_INVAL, shown,
                      "duplicate section (first at line %u)",
                      p->f->s[prev].line);
  if (p->f->n == MAX_SECTIONS)
    return parse_fail(p, BW_E_INVAL, shown, "a file has at most %d sections",
                      MAX_SECTIONS);
  if (p->f->n == p->f->cap) {
    size_t cap = p->f->cap ? p->f->cap * 2 : 8;
    section_t *s = bw_realloc(p->f->s, cap * sizeof *s);
    if (s == NULL) return parse_fail(p, BW_E_NOMEM, "", "out of memory");
    p->f->s = s;
    p->f->cap = cap;
  }
  section_t *s = &p->f->s[p->f->n];
  memset(s, 0, sizeof *s);
  s->kind = (size_t)k;
  memcpy(s->name, inst_z, ilen + 1);
  s->line = p->line;
  s->is_default = is_default;
  p->cur = (int)p->f->n++;
  return 1;
}

/* inih's reader: one line into str (at most num - 1 bytes with its NUL),
 * or NULL at the end. Section headers are read here; inih gets the rest. */
static char *reader(char *str, int num, void *stream) {
  parse_t *p = stream;
  if (p->failed || p->pos >= p->len) return NULL;
  const char *start = p->text + p->pos;
  const char *nl = memchr(start, '\n', p->len - p->pos);
  size_t n = nl != NULL ? (size_t)(nl - start) : p->len - p->pos;
  p->pos += n + (nl != NULL);
  p->line++;
  if (n > 0 && start[n - 1] == '\r') n--;
  if (p->line == 1 && n >= 3 && memcmp(start, "\xEF\xBB\xBF", 3) == 0) {
    start += 3; /* a UTF-8 byte order mark */
    n -= 3;
  }
  /* Leading blanks are dropped: indentation is allowed, and inih's
   * continuation lines (an indented line continuing the previous value)
   * are not a part of this format. */
  while (n > 0 && is_space(*start)) {
    start++;
    n--;
  }
  if (num < 8 || n > (size_t)num - 2) {
    parse_fail(p, BW_E_INVAL, "", "a line is at most %d bytes", num - 2);
    return NULL;
  }
  if (n > 0 && start[0] == '[') {
    const char *end = memchr(start, ']', n);
    if (end == NULL) {
      parse_fail(p, BW_E_INVAL, "", "a section header ends with ']'");
      return NULL;
    }
    for (const char *c = end + 1; c < start + n; c++) {
      if (*c == ';' || *c == '#') break;
      if (!is_space(*c)) {
        parse_fail(p, BW_E_INVAL, "",
                   "nothing but a comment may follow a section header");
        return NULL;
      }
    }
    if (section_begin(p, start + 1, (size_t)(end - start - 1)) == 0)
      return NULL;
    n = (size_t)(end - start + 1);
  }
  memcpy(str, start, n);
  str[n] = '\0';
  return str;
}

static int handler(void *user, const char *section, const char *name,
                   const char *value) {
  parse_t *p = user;
  char key[128];
  (void)section; /* ours is p->cur: inih truncates long section names */
  if (p->failed) return 1;
  if (p->cur < 0)
    return parse_fail(p, BW_E_INVAL, name,
                      "a key before any section: a configuration file is "
                      "[KIND.NAME] sections of key = value lines");
  section_t *s = &p->f->s[p->cur];
  snprintf(key, sizeof key, "%s.%s.%s", sec_kind(s), s->name, name);
  const entry_t *prev = find_entry(s, name);
  if (prev != NULL)
    return parse_fail(p, BW_E_INVAL, key, "duplicate key (first at line %u)",
                      prev->line);
  if (strcmp(name, "name") == 0)
    return parse_fail(p, BW_E_INVAL, key,
                      "the section names the object: name cannot be set");
  if (kinds[s->kind].ck == PIPELINE) {
    if (strcmp(name, "strategies") != 0 && strcmp(name, "min_attempt_ms") != 0)
      return parse_fail(p, BW_E_NOTFOUND, key,
                        "pipeline has no key '%s' (its keys are strategies "
                        "and min_attempt_ms)",
                        name);
  } else if (kinds[s->kind].ck == BW_CONFIG_RETRY &&
             strcmp(name, "budget") == 0) {
    size_t l = strlen(value);
    bool ok = l > 0 && l <= MAX_INSTANCE;
    for (size_t i = 0; ok && i < l; i++)
      ok = is_name_char(value[i]);
    if (!ok)
      return parse_fail(p, BW_E_INVAL, key,
                        "budget names a [budget.NAME] section of the file "
                        "(got '%.64s')",
                        value);
  } else {
    bw_error_t e;
    bw_config_kind_t ck = (bw_config_kind_t)kinds[s->kind].ck;
    bw_config_init(ck, &p->scratch);
    if (bw_config_set(ck, &p->scratch, name, value, &e) != BW_OK)
      return parse_fail(p, e.code, key, "%s", e.message);
  }
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 8;
    entry_t *e = bw_realloc(s->e, cap * sizeof *e);
    if (e == NULL) return parse_fail(p, BW_E_NOMEM, "", "out of memory");
    s->e = e;
    s->cap = cap;
  }
  entry_t *e = &s->e[s->n];
  e->key = bw_strdup(name);
  e->value = bw_strdup(value);
  e->line = p->line;
  if (e->key == NULL || e->value == NULL) {
    bw_free(e->key);
    bw_free(e->value);
    return parse_fail(p, BW_E_NOMEM, "", "out of memory");
  }
  s->n++;
  return 1;
}

/* ---- pass 2: resolve ---------------------------------------------------- */

/* The line that set `field` for section s: its own, its default's, else the
 * section header. */
static unsigned line_of(const bw_config_file_t *f, const section_t *s,
                        const char *field) {
  const entry_t *e = find_entry(s, field);
  if (e != NULL) return e->line;
  int d = find_section(f, s->kind, "default");
  if (d >= 0 && (e = find_entry(&f->s[d], field)) != NULL) return e->line;
  return s->line;
}

static int apply_entries(const bw_config_file_t *f, section_t *s,
                         const section_t *from, bw_config_diag_t *diag) {
  bw_config_kind_t ck = (bw_config_kind_t)kinds[s->kind].ck;
  for (size_t i = 0; i < from->n; i++) {
    const entry_t *e = &from->e[i];
    bw_error_t err;
    char key[128];
    if (ck == BW_CONFIG_RETRY && strcmp(e->key, "budget") == 0) {
      int b = find_section(f, 0 /* budget */, e->value);
      snprintf(key, sizeof key, "%s.%s.budget", sec_kind(from), from->name);
      if (b < 0 || f->s[b].is_default)
        return diag_set(diag, f->file, BW_E_NOTFOUND, e->line, key,
                        "no [budget.%s] section in the file", e->value);
      s->has_budget = true;
      s->budget_ref = (size_t)b;
      continue;
    }
    /* Checked at its line already; the struct differs now, not the rule. */
    if (bw_config_set(ck, s->cfg, e->key, e->value, &err) != BW_OK) {
      snprintf(key, sizeof key, "%s.%s.%s", sec_kind(from), from->name, e->key);
      return diag_set(diag, f->file, err.code, e->line, key, "%s", err.message);
    }
  }
  return BW_OK;
}

static int resolve_object(const bw_config_file_t *f, section_t *s,
                          const bw_config_file_options_t *opt,
                          bw_config_diag_t *diag) {
  bw_config_kind_t ck = (bw_config_kind_t)kinds[s->kind].ck;
  bw_error_t err;
  char key[128];
  int d = find_section(f, s->kind, "default");
  int rc;
  s->cfg = bw_malloc(sizeof *s->cfg);
  if (s->cfg == NULL)
    return diag_set(diag, f->file, BW_E_NOMEM, 0, "", "out of memory");
  bw_config_init(ck, s->cfg);
  if (d >= 0 && (rc = apply_entries(f, s, &f->s[d], diag)) != BW_OK) return rc;
  if ((rc = apply_entries(f, s, s, diag)) != BW_OK) return rc;
  bw_config_set(ck, s->cfg, "name", s->name, NULL);
  if (bw_config_validate(ck, s->cfg, &err) != BW_OK) {
    snprintf(key, sizeof key, "%s.%s.%s", sec_kind(s), s->name, err.field);
    return diag_set(diag, f->file, err.code, line_of(f, s, err.field), key,
                    "%s", err.message);
  }
  if (opt->env_prefix != NULL) {
    if (bw_config_from_env(opt->env_prefix, ck, s->name, s->cfg, &err) != BW_OK)
      return diag_set(diag, f->file, err.code, 0, "",
                      "[%s.%s] from the environment: %s", sec_kind(s), s->name,
                      err.message);
    /* The section names the object, whatever the environment says. */
    bw_config_set(ck, s->cfg, "name", s->name, NULL);
  }
  return BW_OK;
}

/* Reads "deadline D", "timeout D", "KIND.NAME" or "KIND.NAME wait D". */
static int parse_item(const bw_config_file_t *f, const section_t *s,
                      const entry_t *e, uint32_t idx, const char *text,
                      item_t *it, bw_config_diag_t *diag) {
  char key[128], word[3][96];
  int nw = 0;
  const char *c = text;
  snprintf(key, sizeof key, "pipeline.%s.strategies", s->name);
  while (*c != '\0') {
    while (is_space(*c))
      c++;
    if (*c == '\0') break;
    const char *w = c;
    while (*c != '\0' && !is_space(*c))
      c++;
    if (nw == 3 || (size_t)(c - w) >= sizeof word[0])
      return diag_set(diag, f->file, BW_E_INVAL, e->line, key,
                      "strategy %u ('%.64s') must be 'deadline D', "
                      "'timeout D', 'KIND.NAME' or 'KIND.NAME wait D'",
                      idx + 1, text);
    memcpy(word[nw], w, (size_t)(c - w));
    word[nw][c - w] = '\0';
    nw++;
  }
  memset(it, 0, sizeof *it);
  if (nw == 0)
    return diag_set(diag, f->file, BW_E_INVAL, e->line, key,
                    "strategy %u is empty (strategies are separated by ',')",
                    idx + 1);
  if (strcmp(word[0], "deadline") == 0 || strcmp(word[0], "timeout") == 0) {
    it->type = word[0][0] == 'd' ? ITEM_DEADLINE : ITEM_TIMEOUT;
    if (nw != 2 || bw_config_parse_duration_ms(word[1], &it->ms) != BW_OK ||
        it->ms < 1)
      return diag_set(diag, f->file, BW_E_INVAL, e->line, key,
                      "strategy %u: %s takes one duration >= 1 ms, as 2s or "
                      "250ms (got '%.64s')",
                      idx + 1, word[0], text);
    return BW_OK;
  }
  const char *dot = strchr(word[0], '.');
  int k = dot != NULL ? kind_find(word[0], (size_t)(dot - word[0])) : -1;
  int ck = k >= 0 ? kinds[k].ck : PIPELINE;
  if (k < 0 || (ck != BW_CONFIG_BREAKER && ck != BW_CONFIG_RETRY &&
                ck != BW_CONFIG_BULKHEAD && ck != BW_CONFIG_LIMITER &&
                ck != BW_CONFIG_RATELIMIT && ck != BW_CONFIG_THROTTLE))
    return diag_set(diag, f->file, BW_E_INVAL, e->line, key,
                    "strategy %u ('%.64s'): a pipeline stacks deadline D, "
                    "timeout D, breaker.NAME, retry.NAME, bulkhead.NAME, "
                    "limiter.NAME, ratelimit.NAME or throttle.NAME",
                    idx + 1, text);
  int ref = find_section(f, (size_t)k, dot + 1);
  if (ref < 0 || f->s[ref].is_default)
    return diag_set(diag, f->file, BW_E_NOTFOUND, e->line, key,
                    "strategy %u: no [%s] section in the file", idx + 1,
                    word[0]);
  it->type = ITEM_OBJECT;
  it->ref = (size_t)ref;
  if (nw == 1) return BW_OK;
  bool waits = ck == BW_CONFIG_BULKHEAD || ck == BW_CONFIG_LIMITER ||
               ck == BW_CONFIG_RATELIMIT;
  if (!waits || nw != 3 || strcmp(word[1], "wait") != 0 ||
      bw_config_parse_duration_ms(word[2], &it->wait_ms) != BW_OK)
    return diag_set(diag, f->file, BW_E_INVAL, e->line, key,
                    "strategy %u ('%.64s'): only a bulkhead, limiter or "
                    "ratelimit takes 'wait D', D a duration as 2s",
                    idx + 1, text);
  it->has_wait = true;
  return BW_OK;
}

/* Stand in for the objects when the rules between strategies are checked
 * before any object exists (bw_pipeline_config_validate reads only a
 * breaker's or a strategy's table pointer). */
static const bw_breaker_vtable_t placeholder_vt;
/* A throttle's stand-in: validate wants enter and name set; neither runs. */
static int placeholder_enter(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                             int64_t now_ns, bw_refusal_t *r) {
  (void)s;
  (void)ctx;
  (void)now_ns;
  (void)r;
  return BW_OK;
}
static const char *placeholder_name(const bw_strategy_if_t *s) {
  (void)s;
  return "throttle";
}
static const bw_strategy_vtable_t placeholder_strategy_vt = {
    "throttle", placeholder_enter, NULL, placeholder_name};

static int resolve_pipeline(const bw_config_file_t *f, section_t *s,
                            bw_config_diag_t *diag) {
  const entry_t *e = find_entry(s, "strategies");
  char key[128], buf[1024];
  bw_breaker_if_t placeholder = {&placeholder_vt};
  bw_strategy_if_t placeholder_strategy = {&placeholder_strategy_vt};
  bw_pipeline_config_t pc;
  bw_error_t err;
  snprintf(key, sizeof key, "pipeline.%s.strategies", s->name);
  if (e == NULL)
    return diag_set(diag, f->file, BW_E_INVAL, s->line, key,
                    "a pipeline needs its strategies, outermost first");
  bw_pipeline_config_init(&pc);
  pc.name = s->name;
  const char *v = e->value;
  s->nitems = 0;
  /* Split at ',' by hand: strtok would fold empty items away. */
  for (;;) {
    const char *comma = strchr(v, ',');
    size_t l = comma != NULL ? (size_t)(comma - v) : strlen(v);
    if (s->nitems == BW_PIPELINE_MAX_STRATEGIES)
      return diag_set(diag, f->file, BW_E_INVAL, e->line, key,
                      "at most %d strategies", BW_PIPELINE_MAX_STRATEGIES);
    if (l >= sizeof buf) l = sizeof buf - 1;
    memcpy(buf, v, l);
    buf[l] = '\0';
    item_t *it = &s->items[s->nitems];
    int rc = parse_item(f, s, e, s->nitems, buf, it, diag);
    if (rc != BW_OK) return rc;
    bw_strategy_t *st = &pc.strategies[pc.count++];
    memset(st, 0, sizeof *st);
    st->poll_ms = 5;
    if (it->type != ITEM_OBJECT) {
      st->kind = it->type == ITEM_DEADLINE ? BW_STRATEGY_DEADLINE
                                           : BW_STRATEGY_TIMEOUT;
      st->ms = it->ms;
    } else {
      int ck = kinds[f->s[it->ref].kind].ck;
      st->kind = ck == BW_CONFIG_BREAKER     ? BW_STRATEGY_BREAKER
                 : ck == BW_CONFIG_RETRY     ? BW_STRATEGY_RETRY
                 : ck == BW_CONFIG_RATELIMIT ? BW_STRATEGY_RATELIMIT
                 : ck == BW_CONFIG_THROTTLE  ? BW_STRATEGY_CUSTOM
                                             : BW_STRATEGY_LIMIT;
      st->object = ck == BW_CONFIG_THROTTLE ? (void *)&placeholder_strategy
                                            : (void *)&placeholder;
      st->max_wait_ms = it->wait_ms;
    }
    s->nitems++;
    if (comma == NULL) break;
    v = comma + 1;
  }
  /* min_attempt_ms: a duration; its range is the pipeline's own rule,
   * checked with the strategies' below. */
  const entry_t *m = find_entry(s, "min_attempt_ms");
  char mkey[128];
  snprintf(mkey, sizeof mkey, "pipeline.%s.min_attempt_ms", s->name);
  if (m != NULL &&
      bw_config_parse_duration_ms(m->value, &pc.min_attempt_ms) != BW_OK)
    return diag_set(diag, f->file, BW_E_INVAL, m->line, mkey,
                    "a duration, as 180ms or 1s (a bare number is ms; got "
                    "'%.64s')",
                    m->value);
  if (bw_pipeline_config_validate(&pc, &err) != BW_OK) {
    bool on_min = m != NULL && strcmp(err.field, "min_attempt_ms") == 0;
    return diag_set(diag, f->file, err.code, on_min ? m->line : e->line,
                    on_min ? mkey : key, "%s", err.message);
  }
  s->min_attempt_ms = pc.min_attempt_ms;
  return BW_OK;
}

/* ---- the environment: no variable may name an object the file lacks ----- */

extern char **environ;

/* The stem of an object's variables, "PREFIX_NAME_KIND_", into buf. */
static bool env_stem_of(const char *prefix, bw_config_kind_t ck,
                        const char *instance, char *buf, size_t size) {
  if (bw_config_env_name(prefix, ck, instance, "name", buf, size) != BW_OK)
    return false;
  size_t n = strlen(buf);
  if (n < 4) return false;
  buf[n - 4] = '\0'; /* drop "NAME" */
  return true;
}

/* bw_config_from_env refuses an unknown field of a known object; this
 * refuses a variable that names an object the file does not define (a
 * typo in the name, or the wrong kind), which would otherwise be ignored:
 * PREFIX_X_KIND_FIELD for a KIND of the file's sections and no
 * [kind.x]. Not checked with an empty prefix. */
static int env_unknown_objects(const bw_config_file_t *f, const char *prefix,
                               bw_config_diag_t *diag) {
  char pre[256];
  size_t plen;
  if (prefix == NULL || prefix[0] == '\0' ||
      !env_stem_of(prefix, BW_CONFIG_BREAKER, NULL, pre, sizeof pre))
    return BW_OK;
  plen = strlen(pre);
  if (plen < 8) return BW_OK;
  plen -= 8; /* drop "BREAKER_": "PREFIX_" */
  for (char **e = environ; e != NULL && *e != NULL; e++) {
    const char *var = *e;
    const char *eq = strchr(var, '=');
    size_t vlen = eq != NULL ? (size_t)(eq - var) : strlen(var);
    if (vlen <= plen || memcmp(var, pre, plen) != 0) continue;
    /* A variable of an object the file defines: its fields were checked by
     * bw_config_from_env (PAYMENTS_HTTP_RETRY_BASE_MS is the preset's,
     * though it spells _RETRY_ too). */
    bool defined = false;
    for (size_t j = 0; !defined && j < f->nobjs; j++) {
      const section_t *o = &f->s[f->objs[j]];
      char stem[256];
      if (kinds[o->kind].ck == PIPELINE) continue;
      defined = env_stem_of(prefix, (bw_config_kind_t)kinds[o->kind].ck,
                            o->name, stem, sizeof stem) &&
                strlen(stem) <= vlen && memcmp(var, stem, strlen(stem)) == 0;
    }
    if (defined) continue;
    for (size_t k = 0; k < NKINDS; k++) {
      char seg[260], stem[256];
      int ck = kinds[k].ck;
      if (ck == PIPELINE) continue;
      /* "_KIND_" as the variable spells it. */
      if (!env_stem_of(NULL, (bw_config_kind_t)ck, NULL, stem, sizeof stem))
        continue;
      snprintf(seg, sizeof seg, "_%s", stem);
      bool has = false;
      for (size_t at = plen; !has && at + strlen(seg) <= vlen; at++)
        has = memcmp(var + at, seg, strlen(seg)) == 0;
      if (!has) continue;
      bool known = false;
      for (size_t j = 0; !known && j < f->nobjs; j++) {
        const section_t *o = &f->s[f->objs[j]];
        if (o->kind != k) continue;
        if (env_stem_of(prefix, (bw_config_kind_t)ck, o->name, stem,
                        sizeof stem) &&
            strlen(stem) <= vlen && memcmp(var, stem, strlen(stem)) == 0)
          known = true;
      }
      if (known) break; /* its fields were checked by bw_config_from_env */
      return diag_set(diag, f->file, BW_E_NOTFOUND, 0, "",
                      "%.*s names a %s that the file does not define (the "
                      "environment overrides PREFIX_NAME_KIND_FIELD of the "
                      "file's [KIND.NAME] sections only)",
                      (int)(vlen > 200 ? 200 : vlen), var, kinds[k].name);
    }
  }
  return BW_OK;
}

/* ---- the HTTP preset's parts -------------------------------------------- */

/* The parts an [http.NAME] section makes, each named NAME in its kind: the
 * index of the kind in kinds[] and whether the section uses it. */
typedef struct http_part_s {
  const char *kind; /* kinds[].name */
  bw_registry_kind_t rk;
  bool used;
} http_part_t;

static size_t http_parts(const section_t *s, http_part_t out[5]) {
  const bw_http_standard_config_t *c = (const void *)s->cfg;
  out[0] = (http_part_t){"limiter", BW_REGISTRY_LIMITER, c->use_limiter};
  out[1] = (http_part_t){"breaker", BW_REGISTRY_BREAKER, c->use_breaker};
  out[2] = (http_part_t){"retry", BW_REGISTRY_RETRY, c->use_retry};
  out[3] = (http_part_t){"budget", BW_REGISTRY_BUDGET,
                         c->use_budget && c->use_retry};
  out[4] = (http_part_t){"pipeline", BW_REGISTRY_PIPELINE, true};
  return 5;
}

/* An [http.NAME] makes a breaker, limiter, retry, budget and pipeline named
 * NAME: a section of the file naming one of those too would be two objects
 * under one name. */
static int http_collisions(const bw_config_file_t *f, bw_config_diag_t *diag) {
  for (size_t j = 0; j < f->nobjs; j++) {
    const section_t *s = &f->s[f->objs[j]];
    http_part_t parts[5];
    char key[64];
    if (kinds[s->kind].ck != BW_CONFIG_HTTP) continue;
    size_t n = http_parts(s, parts);
    for (size_t i = 0; i < n; i++) {
      int k = kind_find(parts[i].kind, strlen(parts[i].kind));
      int o = k >= 0 ? find_section(f, (size_t)k, s->name) : -1;
      if (!parts[i].used || o < 0 || f->s[o].is_default) continue;
      snprintf(key, sizeof key, "[http.%s]", s->name);
      return diag_set(diag, f->file, BW_E_INVAL, s->line, key,
                      "[http.%s] makes the %s named '%s', and [%s.%s] at "
                      "line %u names one too: rename one of them",
                      s->name, parts[i].kind, s->name, parts[i].kind, s->name,
                      f->s[o].line);
    }
  }
  return BW_OK;
}

/* The first part of an [http.NAME] already in the registry, or NULL. */
static const char *http_part_live(bw_registry_t *reg, const section_t *s) {
  http_part_t parts[5];
  size_t n = http_parts(s, parts);
  for (size_t i = 0; i < n; i++) {
    void *o;
    if (!parts[i].used) continue;
    o = bw_registry_find(reg, parts[i].rk, s->name);
    if (o == NULL) continue;
    if (parts[i].rk == BW_REGISTRY_BREAKER) bw_registry_put(reg, o);
    return parts[i].kind;
  }
  return NULL;
}

/* ---- reading ------------------------------------------------------------ */

bw_config_file_t *bw_config_file_parse(const char *text, size_t len,
                                       const char *name,
                                       const bw_config_file_options_t *opt,
                                       bw_config_diag_t *diag) {
  bw_config_file_options_t defaults;
  bw_config_file_t *f;
  parse_t *p;
  diag_clear(diag);
  if (name == NULL) name = "(text)";
  if (text == NULL && len > 0) {
    diag_set(diag, name, BW_E_INVAL, 0, "", "text must not be NULL");
    return NULL;
  }
  if (opt == NULL) {
    bw_config_file_options_init(&defaults);
    opt = &defaults;
  }
  if (len > MAX_FILE_BYTES) {
    diag_set(diag, name, BW_E_INVAL, 0, "", "a file is at most %d bytes",
             MAX_FILE_BYTES);
    return NULL;
  }
  if (len > 0 && memchr(text, '\0', len) != NULL) {
    unsigned line = 1;
    for (const char *c = text; *c != '\0'; c++)
      line += *c == '\n';
    diag_set(diag, name, BW_E_INVAL, line, "",
             "not a text file (a NUL byte): an INI file is expected");
    return NULL;
  }
  f = bw_calloc(1, sizeof *f);
  p = bw_calloc(1, sizeof *p);
  if (f == NULL || p == NULL || (f->file = bw_strdup(name)) == NULL) {
    bw_free(p);
    bw_config_file_free(f);
    diag_set(diag, name, BW_E_NOMEM, 0, "", "out of memory");
    return NULL;
  }
  p->text = text;
  p->len = len;
  p->f = f;
  p->diag = diag;
  p->cur = -1;
  int ret = ini_parse_stream(reader, p, handler, p);
  bool failed = p->failed;
  unsigned fail_line = p->fail_line;
  bw_free(p);
  if (ret == -2) {
    diag_set(diag, name, BW_E_NOMEM, 0, "", "out of memory");
    goto fail;
  }
  /* inih's own refusal (a line that is neither a header nor key = value)
   * wins when it comes first. */
  if (ret > 0 && (!failed || (unsigned)ret < fail_line)) {
    diag_set(diag, name, BW_E_INVAL, (unsigned)ret, "",
             "expected [KIND.NAME], key = value, a comment or a blank line");
    goto fail;
  }
  if (failed) goto fail;

  f->objs = bw_calloc(f->n ? f->n : 1, sizeof *f->objs);
  if (f->objs == NULL) {
    diag_set(diag, name, BW_E_NOMEM, 0, "", "out of memory");
    goto fail;
  }
  for (size_t i = 0; i < f->n; i++) {
    section_t *s = &f->s[i];
    if (s->is_default) continue;
    int rc = kinds[s->kind].ck == PIPELINE ? resolve_pipeline(f, s, diag)
                                           : resolve_object(f, s, opt, diag);
    if (rc != BW_OK) goto fail;
    f->objs[f->nobjs++] = i;
  }
  f->by_kind = bw_calloc(f->n ? f->n : 1, sizeof *f->by_kind);
  if (f->by_kind == NULL) {
    diag_set(diag, name, BW_E_NOMEM, 0, "", "out of memory");
    goto fail;
  }
  for (size_t k = 0, m = 0; k < NKINDS; k++)
    for (size_t j = 0; j < f->nobjs; j++)
      if (f->s[f->objs[j]].kind == k) f->by_kind[m++] = f->objs[j];
  if (http_collisions(f, diag) != BW_OK) goto fail;
  if (env_unknown_objects(f, opt->env_prefix, diag) != BW_OK) goto fail;
  return f;
fail:
  bw_config_file_free(f);
  return NULL;
}

bw_config_file_t *bw_config_file_read(const char *path,
                                      const bw_config_file_options_t *opt,
                                      bw_config_diag_t *diag) {
  FILE *fp;
  char *buf;
  size_t n;
  diag_clear(diag);
  if (path == NULL) {
    diag_set(diag, "(null)", BW_E_INVAL, 0, "", "path must not be NULL");
    return NULL;
  }
  fp = fopen(path, "rb");
  if (fp == NULL) {
    diag_set(diag, path, BW_E_IO, 0, "", "cannot open: %s", strerror(errno));
    return NULL;
  }
  buf = bw_malloc(MAX_FILE_BYTES + 1);
  if (buf == NULL) {
    fclose(fp);
    diag_set(diag, path, BW_E_NOMEM, 0, "", "out of memory");
    return NULL;
  }
  n = fread(buf, 1, MAX_FILE_BYTES + 1, fp);
  if (ferror(fp)) {
    int e = errno;
    fclose(fp);
    bw_free(buf);
    diag_set(diag, path, BW_E_IO, 0, "", "cannot read: %s", strerror(e));
    return NULL;
  }
  fclose(fp);
  bw_config_file_t *f = bw_config_file_parse(buf, n, path, opt, diag);
  bw_free(buf);
  return f;
}

/* ---- looking at it ------------------------------------------------------ */

size_t bw_config_file_count(const bw_config_file_t *f) {
  return f != NULL ? f->nobjs : 0;
}

int bw_config_file_object(const bw_config_file_t *f, size_t i,
                          const char **kind, const char **name) {
  if (f == NULL || kind == NULL || name == NULL) return BW_E_INVAL;
  if (i >= f->nobjs) return BW_E_RANGE;
  *kind = sec_kind(&f->s[f->objs[i]]);
  *name = f->s[f->objs[i]].name;
  return BW_OK;
}

const void *bw_config_file_config(const bw_config_file_t *f,
                                  bw_config_kind_t kind, const char *name) {
  if (f == NULL || name == NULL) return NULL;
  for (size_t i = 0; i < f->nobjs; i++) {
    const section_t *s = &f->s[f->objs[i]];
    if (kinds[s->kind].ck == (int)kind && strcmp(s->name, name) == 0)
      return s->cfg;
  }
  return NULL;
}

int bw_config_file_write(const bw_config_file_t *f, FILE *out) {
  if (f == NULL || out == NULL) return BW_E_INVAL;
  for (size_t i = 0; i < f->nobjs; i++) {
    const section_t *s = &f->s[f->objs[i]];
    int ck = kinds[s->kind].ck;
    fprintf(out, "%s[%s.%s]\n", i > 0 ? "\n" : "", sec_kind(s), s->name);
    if (ck == PIPELINE) {
      fprintf(out, "strategies = ");
      for (uint32_t j = 0; j < s->nitems; j++) {
        const item_t *it = &s->items[j];
        fprintf(out, "%s", j > 0 ? ", " : "");
        if (it->type != ITEM_OBJECT) {
          fprintf(out, "%s %lldms",
                  it->type == ITEM_DEADLINE ? "deadline" : "timeout",
                  (long long)it->ms);
          continue;
        }
        const section_t *r = &f->s[it->ref];
        fprintf(out, "%s.%s", sec_kind(r), r->name);
        if (it->has_wait) fprintf(out, " wait %lldms", (long long)it->wait_ms);
      }
      fprintf(out, "\nmin_attempt_ms = %lld\n", (long long)s->min_attempt_ms);
      continue;
    }
    size_t n;
    const bw_config_field_t *fl = bw_config_fields((bw_config_kind_t)ck, &n);
    for (size_t j = 0; j < n; j++) {
      char value[256];
      if (fl[j].type == BW_CONFIG_T_POINTER || strcmp(fl[j].name, "name") == 0)
        continue;
      if (bw_config_get((bw_config_kind_t)ck, s->cfg, fl[j].name, value,
                        sizeof value, NULL) != BW_OK)
        continue;
      fprintf(out, "%s = %s\n", fl[j].name, value);
    }
    if (s->has_budget) fprintf(out, "budget = %s\n", f->s[s->budget_ref].name);
  }
  return fflush(out) == 0 && !ferror(out) ? BW_OK : BW_E_IO;
}

/* ---- pass 3: apply ------------------------------------------------------ */

/* The standard HTTP pipeline of an [http.NAME] section, in the order
 * bw_http_standard_add_strategies gives (http_standard.h), but of registry
 * objects, each named NAME: the limiter, the breaker (held, as the file's
 * breakers), the budget, the retry on it, then the pipeline, outermost
 * first: deadline, limit (waiting limit_wait_ms), breaker, retry, attempt
 * timeout; with limit_per_attempt the limit goes inside the retry, before
 * the attempt timeout. Their clocks and sinks are the registry's. Returns
 * the pipeline. */
static void *make_http(bw_registry_t *reg, const section_t *s,
                       bw_error_t *err) {
  const bw_http_standard_config_t *c = (const void *)s->cfg;
  bw_limiter_t *lim = NULL;
  bw_breaker_t *b = NULL;
  bw_budget_t *bu = NULL;
  bw_retry_policy_t *rt = NULL;
  bw_pipeline_config_t pc;
  if (c->use_limiter &&
      (lim = bw_registry_limiter(reg, s->name, &c->limiter, err)) == NULL)
    return NULL;
  if (c->use_breaker && (bw_registry_set_breaker_config(
                             reg, s->name, &c->breaker, err) != BW_OK ||
                         (b = bw_registry_breaker(reg, s->name, err)) == NULL))
    return NULL;
  if (c->use_retry && c->use_budget &&
      (bu = bw_registry_budget(reg, s->name, &c->budget, err)) == NULL)
    return NULL;
  if (c->use_retry) {
    bw_retry_config_t rc = c->retry;
    rc.budget = bu;
    if ((rt = bw_registry_retry(reg, s->name, &rc, err)) == NULL) return NULL;
  }
  bw_pipeline_config_init(&pc);
  pc.name = s->name;
  pc.min_attempt_ms = c->min_attempt_ms;
  /* At most five strategies: they fit (validated with the file). */
  (void)bw_http_standard_add_strategies(&pc, c, lim, b, rt);
  return bw_registry_pipeline(reg, s->name, &pc, err);
}

static void *make(bw_registry_t *reg, const bw_config_file_t *f,
                  const section_t *s, void *const *objs, bw_error_t *err) {
  const void *c = s->cfg;
  switch (kinds[s->kind].ck) {
  case BW_CONFIG_HTTP:
    return make_http(reg, s, err);
  case BW_CONFIG_BUDGET:
    return bw_registry_budget(reg, s->name, c, err);
  case BW_CONFIG_RETRY: {
    bw_retry_config_t rc = *(const bw_retry_config_t *)c;
    if (s->has_budget) rc.budget = objs[s->budget_ref];
    return bw_registry_retry(reg, s->name, &rc, err);
  }
  case BW_CONFIG_BREAKER:
    if (bw_registry_set_breaker_config(reg, s->name, c, err) != BW_OK)
      return NULL;
    return bw_registry_breaker(reg, s->name, err); /* the hold is kept */
  case BW_CONFIG_BULKHEAD:
    return bw_registry_bulkhead(reg, s->name, c, err);
  case BW_CONFIG_LIMITER:
    return bw_registry_limiter(reg, s->name, c, err);
  case BW_CONFIG_RATELIMIT:
    return bw_registry_ratelimit(reg, s->name, c, err);
  case BW_CONFIG_THROTTLE:
    return bw_registry_throttle(reg, s->name, c, err);
  case BW_CONFIG_PRIORITY_QUEUE:
    return bw_registry_queue(reg, s->name, c, err);
  case BW_CONFIG_STAGE:
    return bw_registry_stage(reg, s->name, c, err);
  case BW_CONFIG_DEGRADE:
    return bw_registry_degrade(reg, s->name, c, err);
  default: {
    bw_pipeline_config_t pc;
    bw_pipeline_config_init(&pc);
    pc.name = s->name;
    pc.min_attempt_ms = s->min_attempt_ms;
    for (uint32_t j = 0; j < s->nitems; j++) {
      const item_t *it = &s->items[j];
      if (it->type == ITEM_DEADLINE) {
        bw_pipeline_add_deadline(&pc, it->ms);
        continue;
      }
      if (it->type == ITEM_TIMEOUT) {
        bw_pipeline_add_timeout(&pc, it->ms);
        continue;
      }
      const section_t *r = &f->s[it->ref];
      void *o = objs[it->ref];
      switch (kinds[r->kind].ck) {
      case BW_CONFIG_BREAKER:
        bw_pipeline_add_breaker(&pc, o);
        break;
      case BW_CONFIG_RETRY:
        bw_pipeline_add_retry(&pc, o);
        break;
      case BW_CONFIG_BULKHEAD: {
        /* A bulkhead waits for a slot as long as its own max_wait_ms,
         * unless the pipeline says otherwise. */
        const bw_bulkhead_config_t *bc = (const void *)r->cfg;
        bw_pipeline_add_limit(&pc, bw_bulkhead_as_limit(o),
                              it->has_wait ? it->wait_ms : bc->max_wait_ms);
        break;
      }
      case BW_CONFIG_LIMITER:
        bw_pipeline_add_limit(&pc, bw_limiter_as_limit(o), it->wait_ms);
        break;
      case BW_CONFIG_THROTTLE:
        /* Refuses at once (a local refusal is not waited out). */
        bw_pipeline_add_strategy(&pc, bw_throttle_strategy(o), 0);
        break;
      default:
        bw_pipeline_add_ratelimit(&pc, o, it->wait_ms);
        break;
      }
    }
    return bw_registry_pipeline(reg, s->name, &pc, err);
  }
  }
}

int bw_config_file_apply(const bw_config_file_t *f, bw_registry_t *reg,
                         bw_config_diag_t *diag) {
  void **objs;
  diag_clear(diag);
  if (f == NULL || reg == NULL)
    return diag_set(diag, f != NULL ? f->file : "(null)", BW_E_INVAL, 0, "",
                    "f and reg must not be NULL");
  /* Every name must be new in its kind: get-or-create would otherwise
   * hand back the existing object and silently ignore the file. */
  for (size_t i = 0; i < f->nobjs; i++) {
    const section_t *s = &f->s[f->objs[i]];
    void *o = bw_registry_find(reg, kinds[s->kind].rk, s->name);
    char key[64];
    const char *part;
    if (kinds[s->kind].ck == BW_CONFIG_HTTP && o == NULL &&
        (part = http_part_live(reg, s)) != NULL) {
      snprintf(key, sizeof key, "[http.%s]", s->name);
      return diag_set(diag, f->file, BW_E_INVAL, s->line, key,
                      "a %s named '%s' is already in the registry (the "
                      "preset makes one)",
                      part, s->name);
    }
    if (o == NULL) continue;
    if (kinds[s->kind].rk == BW_REGISTRY_BREAKER) bw_registry_put(reg, o);
    snprintf(key, sizeof key, "[%s.%s]", sec_kind(s), s->name);
    return diag_set(diag, f->file, BW_E_INVAL, s->line, key,
                    "a %s named '%s' is already in the registry", sec_kind(s),
                    s->name);
  }
  objs = bw_calloc(f->n ? f->n : 1, sizeof *objs);
  if (objs == NULL)
    return diag_set(diag, f->file, BW_E_NOMEM, 0, "", "out of memory");
  for (size_t j = 0; j < f->nobjs; j++) {
    size_t i = f->by_kind[j];
    const section_t *s = &f->s[i];
    bw_error_t err;
    char key[64];
    objs[i] = make(reg, f, s, objs, &err);
    if (objs[i] == NULL) {
      bw_free(objs);
      snprintf(key, sizeof key, "[%s.%s]", sec_kind(s), s->name);
      return diag_set(diag, f->file, err.code, s->line, key, "%s", err.message);
    }
  }
  bw_free(objs);
  return BW_OK;
}

int bw_registry_load_file_ex(bw_registry_t *reg, const char *path,
                             const bw_config_file_options_t *opt,
                             bw_config_diag_t *diag) {
  bw_config_diag_t local;
  bw_config_file_t *f;
  int rc;
  if (diag == NULL) diag = &local;
  if (reg == NULL)
    return diag_set(diag, path != NULL ? path : "(null)", BW_E_INVAL, 0, "",
                    "reg must not be NULL");
  f = bw_config_file_read(path, opt, diag);
  if (f == NULL) return diag->code;
  rc = bw_config_file_apply(f, reg, diag);
  bw_config_file_free(f);
  return rc;
}

/* The simple forms' error: rc, and the diagnostic's key and message (the
 * message already names the file and line). */
static int diag_to_error(int rc, const bw_config_diag_t *d, bw_error_t *err) {
  if (rc == BW_OK) {
    bw_error_clear(err);
    return BW_OK;
  }
  if (err != NULL) {
    err->code = rc;
    copy_trunc(err->field, sizeof err->field, d->key);
    copy_trunc(err->message, sizeof err->message, d->message);
  }
  return rc;
}

int bw_registry_load_file(bw_registry_t *reg, const char *path,
                          bw_error_t *err) {
  bw_config_diag_t d;
  return diag_to_error(bw_registry_load_file_ex(reg, path, NULL, &d), &d, err);
}

/* ---- reload ------------------------------------------------------------- */

void bw_config_reload_clear(bw_config_reload_t *r) {
  if (r == NULL) return;
  bw_free(r->report);
  memset(r, 0, sizeof *r);
}

typedef struct report_s {
  bw_config_reload_t *r;
  size_t len, cap;
  bool oom;
} report_t;

static void report_line(report_t *rp, const char *fmt, ...)
    BW_PRINTF_LIKE(2, 3);

static void report_line(report_t *rp, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0 || rp->oom) return;
  if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  line[n] = '\0';
  if (rp->len + (size_t)n + 1 > rp->cap) {
    size_t cap = rp->cap ? rp->cap * 2 : 1024;
    while (cap < rp->len + (size_t)n + 1)
      cap *= 2;
    char *p = bw_realloc(rp->r->report, cap);
    if (p == NULL) {
      rp->oom = true;
      return;
    }
    rp->r->report = p;
    rp->cap = cap;
  }
  memcpy(rp->r->report + rp->len, line, (size_t)n + 1);
  rp->len += (size_t)n;
}

/* Is `field` one a live breaker cannot change (bw_breaker_reconfigure)? */
static bool breaker_fixed(const char *field) {
  return strcmp(field, "trip_rule") == 0 || strcmp(field, "window_size") == 0 ||
         strcmp(field, "window_ms") == 0 ||
         strcmp(field, "window_buckets") == 0;
}

/* Plans a live breaker's changes: the lines, and in *merged the file's
 * values with the fixed ones kept as they are. false: none can be applied
 * (the lines say why). */
static bool plan_breaker(const section_t *s, const bw_breaker_t *b,
                         bw_breaker_config_t *merged, report_t *rp) {
  const bw_breaker_config_t *want = (const void *)s->cfg;
  bw_breaker_config_t now;
  bw_error_t err;
  size_t n;
  const bw_config_field_t *fl = bw_config_fields(BW_CONFIG_BREAKER, &n);
  bw_breaker_config_of(b, &now);
  *merged = *want;
  merged->name = now.name;
  merged->clock = now.clock;
  merged->wall_clock = now.wall_clock;
  merged->sink = now.sink;
  merged->listener = now.listener;
  merged->listener_userdata = now.listener_userdata;
  merged->trip_rule = now.trip_rule;
  merged->window_size = now.window_size;
  merged->window_ms = now.window_ms;
  merged->window_buckets = now.window_buckets;
  bool slow_flips = (want->slow_call_ms > 0) != (now.slow_call_ms > 0);
  if (slow_flips) merged->slow_call_ms = now.slow_call_ms;
  bool ok = bw_breaker_config_validate(merged, &err) == BW_OK;
  for (size_t i = 0; i < n; i++) {
    char a[128], z[128];
    if (fl[i].type == BW_CONFIG_T_POINTER || strcmp(fl[i].name, "name") == 0)
      continue;
    bw_config_get(BW_CONFIG_BREAKER, &now, fl[i].name, a, sizeof a, NULL);
    bw_config_get(BW_CONFIG_BREAKER, want, fl[i].name, z, sizeof z, NULL);
    if (strcmp(a, z) == 0) continue;
    bool fixed = breaker_fixed(fl[i].name) ||
                 (slow_flips && strcmp(fl[i].name, "slow_call_ms") == 0);
    if (fixed) {
      rp->r->not_applied++;
      report_line(rp,
                  "breaker.%s.%s: %s -> %s: not applied: %s (restart to "
                  "apply)",
                  s->name, fl[i].name, a, z,
                  strcmp(fl[i].name, "slow_call_ms") == 0
                      ? "slow-call detection is turned on or off at creation"
                      : "fixed at creation");
    } else if (!ok) {
      rp->r->not_applied++;
      report_line(rp,
                  "breaker.%s.%s: %s -> %s: not applied: with the live "
                  "breaker's fixed fields, %s",
                  s->name, fl[i].name, a, z, err.message);
    } else {
      rp->r->applied++;
      report_line(rp, "breaker.%s.%s: %s -> %s: applied", s->name, fl[i].name,
                  a, z);
    }
  }
  return ok;
}

/* ---- the other kinds with live setters ----------------------------------
 * A bulkhead's max_concurrent, a rate limiter's rate and burst, an adaptive
 * limiter's bounds, a ratio budget's share and floor, a throttle's K: the
 * core's setters (bulkhead.h, ratelimit.h, limiter.h, budget.h,
 * throttle.h). Every other field of theirs is fixed at creation. */

static void of_bulkhead(const void *o, void *c) {
  bw_bulkhead_config_of(o, c);
}
static void of_ratelimit(const void *o, void *c) {
  bw_ratelimit_config_of(o, c);
}
static void of_limiter(const void *o, void *c) {
  bw_limiter_config_of(o, c);
}
static void of_budget(const void *o, void *c) {
  bw_budget_config_of(o, c);
}
static void of_throttle(const void *o, void *c) {
  bw_throttle_config_of(o, c);
}

static bool is(const char *field, const char *a, const char *b) {
  return strcmp(field, a) == 0 || (b != NULL && strcmp(field, b) == 0);
}

static bool live_bulkhead(const void *now, const char *f) {
  (void)now;
  return is(f, "max_concurrent", NULL);
}
static bool live_ratelimit(const void *now, const char *f) {
  (void)now;
  return is(f, "rate_per_sec", "burst");
}
static bool live_limiter(const void *now, const char *f) {
  (void)now;
  return is(f, "min_limit", "max_limit");
}
static bool live_throttle(const void *now, const char *f) {
  (void)now;
  return is(f, "k", NULL);
}
static bool live_budget(const void *now, const char *f) {
  const bw_budget_config_t *c = now;
  return c->kind == BW_BUDGET_RATIO &&
         is(f, "budget_percent", "min_retries_per_sec");
}

/* Checks, changing nothing, what the setter alone would refuse (beyond the
 * kind's validate). */
static int check_limiter(const void *o, const void *m, bw_error_t *err) {
  const bw_limiter_config_t *c = m;
  return bw_limiter_check_bounds(o, c->min_limit, c->max_limit, err);
}

static int set_bulkhead(void *o, const void *m, bw_error_t *err) {
  return bw_bulkhead_set_max_concurrent(
      o, ((const bw_bulkhead_config_t *)m)->max_concurrent, err);
}
static int set_ratelimit(void *o, const void *m, bw_error_t *err) {
  const bw_ratelimit_config_t *c = m;
  return bw_ratelimit_set_rate(o, c->rate_per_sec, c->burst, err);
}
static int set_limiter(void *o, const void *m, bw_error_t *err) {
  const bw_limiter_config_t *c = m;
  return bw_limiter_set_bounds(o, c->min_limit, c->max_limit, err);
}
static int set_throttle(void *o, const void *m, bw_error_t *err) {
  return bw_throttle_set_k(o, ((const bw_throttle_config_t *)m)->k, err);
}
static int set_budget(void *o, const void *m, bw_error_t *err) {
  const bw_budget_config_t *c = m;
  if (c->kind != BW_BUDGET_RATIO) return BW_OK; /* nothing live */
  return bw_budget_set_ratio(o, c->budget_percent, c->min_retries_per_sec, err);
}

typedef struct live_ops_s {
  bw_config_kind_t ck;
  void (*config_of)(const void *obj, void *cfg);
  bool (*live)(const void *now, const char *field); /* settable live? */
  const char *creation_only; /* a field read only at creation, or NULL */
  int (*check)(const void *obj, const void *merged, bw_error_t *err);
  int (*set)(void *obj, const void *merged, bw_error_t *err);
} live_ops_t;

static const live_ops_t live_ops[] = {
    {BW_CONFIG_BULKHEAD, of_bulkhead, live_bulkhead, NULL, NULL, set_bulkhead},
    {BW_CONFIG_RATELIMIT, of_ratelimit, live_ratelimit, NULL, NULL,
     set_ratelimit},
    {BW_CONFIG_LIMITER, of_limiter, live_limiter, "initial_limit",
     check_limiter, set_limiter},
    {BW_CONFIG_BUDGET, of_budget, live_budget, NULL, NULL, set_budget},
    {BW_CONFIG_THROTTLE, of_throttle, live_throttle, NULL, NULL, set_throttle},
};

static const live_ops_t *live_ops_of(int ck) {
  for (size_t i = 0; i < sizeof live_ops / sizeof live_ops[0]; i++)
    if ((int)live_ops[i].ck == ck) return &live_ops[i];
  return NULL;
}

/* Plans a live object's changes, as plan_breaker: the lines, and in
 * *merged its configuration now with the file's values of the fields it
 * can change live (and of a creation-only field, so that the rules
 * between fields are checked on the file's own values). false: none can
 * be applied (the lines say why). */
static bool plan_live(const live_ops_t *ops, const section_t *s,
                      const void *obj, any_config_t *merged, report_t *rp) {
  const char *kn = bw_config_kind_name(ops->ck);
  const void *want = s->cfg;
  any_config_t now;
  bw_error_t err;
  size_t n;
  bool ok = true;
  const bw_config_field_t *fl = bw_config_fields(ops->ck, &n);
  memset(&err, 0, sizeof err);
  ops->config_of(obj, &now);
  *merged = now;
  for (size_t i = 0; i < n; i++) {
    char z[128];
    if (fl[i].type == BW_CONFIG_T_POINTER || strcmp(fl[i].name, "name") == 0)
      continue;
    if (!ops->live(&now, fl[i].name) &&
        (ops->creation_only == NULL ||
         strcmp(fl[i].name, ops->creation_only) != 0))
      continue;
    bw_config_get(ops->ck, want, fl[i].name, z, sizeof z, NULL);
    bw_config_set(ops->ck, merged, fl[i].name, z, NULL);
  }
  if (bw_config_validate(ops->ck, merged, &err) != BW_OK ||
      (ops->check != NULL && ops->check(obj, merged, &err) != BW_OK))
    ok = false;
  for (size_t i = 0; i < n; i++) {
    char a[128], z[128];
    if (fl[i].type == BW_CONFIG_T_POINTER || strcmp(fl[i].name, "name") == 0)
      continue;
    bw_config_get(ops->ck, &now, fl[i].name, a, sizeof a, NULL);
    bw_config_get(ops->ck, want, fl[i].name, z, sizeof z, NULL);
    if (strcmp(a, z) == 0) continue;
    if (ops->creation_only != NULL &&
        strcmp(fl[i].name, ops->creation_only) == 0) {
      rp->r->not_applied++;
      report_line(rp,
                  "%s.%s.%s: %s -> %s: not applied: used only at creation "
                  "(restart to apply)",
                  kn, s->name, fl[i].name, a, z);
    } else if (!ops->live(&now, fl[i].name)) {
      rp->r->not_applied++;
      report_line(rp,
                  "%s.%s.%s: %s -> %s: not applied: fixed at creation "
                  "(restart to apply)",
                  kn, s->name, fl[i].name, a, z);
    } else if (!ok) {
      rp->r->not_applied++;
      report_line(rp, "%s.%s.%s: %s -> %s: not applied: on the live %s, %s", kn,
                  s->name, fl[i].name, a, z, kn, err.message);
    } else {
      rp->r->applied++;
      report_line(rp, "%s.%s.%s: %s -> %s: applied", kn, s->name, fl[i].name, a,
                  z);
    }
  }
  return ok;
}

/* A live [http.NAME]: its parts with live setters, and what each takes. */
typedef struct http_live_s {
  bw_breaker_t *b; /* held (found), put back when the reload ends */
  bw_limiter_t *lim;
  bw_budget_t *bu;
  bool apply_b, apply_lim, apply_bu;
  any_config_t mb, mlim, mbu; /* the merged configurations */
} http_live_t;

/* A use_* toggle of a live preset: the parts are made with the pipeline. */
static void http_toggle(report_t *rp, const section_t *s, const char *field,
                        bool now, bool want) {
  if (now == want) return;
  rp->r->not_applied++;
  report_line(rp,
              "http.%s.%s: %s -> %s: not applied: the preset's parts are "
              "made with its pipeline (restart to apply)",
              s->name, field, now ? "true" : "false", want ? "true" : "false");
}

/* Whether a live preset's pipeline was made with the limit inside the
 * retry: the limit after the breaker or the retry. -1 when its order does
 * not tell (no limit, or neither a breaker nor a retry: both orders are
 * then the same pipeline). */
static int http_made_per_attempt(bw_registry_t *reg, const section_t *s) {
  const bw_pipeline_t *pl =
      bw_registry_find(reg, BW_REGISTRY_PIPELINE, s->name);
  uint32_t n = bw_pipeline_strategy_count(pl);
  bool limit = false, before = false, after = false;
  for (uint32_t i = 0; i < n; i++) {
    bw_strategy_t st;
    if (bw_pipeline_strategy_at(pl, i, &st) != BW_OK) return -1;
    if (st.kind == BW_STRATEGY_LIMIT)
      limit = true;
    else if (st.kind == BW_STRATEGY_BREAKER || st.kind == BW_STRATEGY_RETRY)
      *(limit ? &after : &before) = true;
  }
  if (!limit || (!before && !after)) return -1;
  return before ? 1 : 0;
}

/* Plans a live [http.NAME] (its pipeline exists): its breaker, limiter and
 * budget are planned as the file's sections of their kinds would be (the
 * lines name them breaker.NAME..., the objects they are); a use_* toggle
 * is not applied; the pipeline's own fields and the retry policy are kept
 * as made (one line). Finds and holds the parts in *h. */
static void plan_http(bw_registry_t *reg, const section_t *s, http_live_t *h,
                      report_t *rp) {
  const bw_http_standard_config_t *want = (const void *)s->cfg;
  any_config_t part;
  section_t t;
  memset(&t, 0, sizeof t);
  memcpy(t.name, s->name, sizeof t.name);
  t.line = s->line;
  t.cfg = &part;
  h->b = bw_registry_find(reg, BW_REGISTRY_BREAKER, s->name);
  h->lim = bw_registry_find(reg, BW_REGISTRY_LIMITER, s->name);
  h->bu = bw_registry_find(reg, BW_REGISTRY_BUDGET, s->name);
  http_toggle(rp, s, "use_limiter", h->lim != NULL, want->use_limiter);
  http_toggle(rp, s, "use_breaker", h->b != NULL, want->use_breaker);
  http_toggle(rp, s, "use_retry",
              bw_registry_find(reg, BW_REGISTRY_RETRY, s->name) != NULL,
              want->use_retry);
  http_toggle(rp, s, "use_budget", h->bu != NULL,
              want->use_budget && want->use_retry);
  /* The limit's place is the pipeline's order, fixed at creation. */
  int per_attempt = http_made_per_attempt(reg, s);
  if (per_attempt >= 0 && (per_attempt == 1) != want->limit_per_attempt) {
    rp->r->not_applied++;
    report_line(rp,
                "http.%s.limit_per_attempt: %s -> %s: not applied: fixed at "
                "creation, the pipeline's order (restart to apply)",
                s->name, per_attempt ? "true" : "false",
                want->limit_per_attempt ? "true" : "false");
  }
  if (h->lim != NULL && want->use_limiter) {
    memcpy(&part, &want->limiter, sizeof want->limiter);
    h->apply_lim =
        plan_live(live_ops_of(BW_CONFIG_LIMITER), &t, h->lim, &h->mlim, rp);
  }
  if (h->b != NULL && want->use_breaker) {
    memcpy(&part, &want->breaker, sizeof want->breaker);
    h->apply_b = plan_breaker(&t, h->b, (void *)&h->mb, rp);
  }
  if (h->bu != NULL && want->use_budget && want->use_retry) {
    memcpy(&part, &want->budget, sizeof want->budget);
    h->apply_bu =
        plan_live(live_ops_of(BW_CONFIG_BUDGET), &t, h->bu, &h->mbu, rp);
  }
  rp->r->kept++;
  report_line(rp,
              "http.%s: its pipeline (deadline_ms, limit_wait_ms, "
              "attempt_timeout_ms, limit_per_attempt, min_attempt_ms) and "
              "retry policy are kept as made "
              "(restart to apply a change)",
              s->name);
}

int bw_registry_reload_ex(bw_registry_t *reg, const char *path,
                          const bw_config_file_options_t *opt,
                          bw_config_reload_t *report, bw_config_diag_t *diag) {
  bw_config_reload_t local_report;
  bw_config_diag_t local_diag;
  report_t rp;
  bw_config_file_t *f;
  void **objs = NULL;
  bool *live = NULL, *keep_hold = NULL;
  any_config_t *merged = NULL;
  bool *apply = NULL;
  http_live_t **hl = NULL;
  int rc = BW_OK;
  if (report == NULL) report = &local_report;
  if (diag == NULL) diag = &local_diag;
  memset(report, 0, sizeof *report);
  memset(&rp, 0, sizeof rp);
  rp.r = report;
  if (reg == NULL)
    return diag_set(diag, path != NULL ? path : "(null)", BW_E_INVAL, 0, "",
                    "reg must not be NULL");
  f = bw_config_file_read(path, opt, diag);
  if (f == NULL) return diag->code;
  size_t n = f->n ? f->n : 1;
  objs = bw_calloc(n, sizeof *objs);
  live = bw_calloc(n, sizeof *live);
  keep_hold = bw_calloc(n, sizeof *keep_hold);
  apply = bw_calloc(n, sizeof *apply);
  merged = bw_calloc(n, sizeof *merged);
  hl = bw_calloc(n, sizeof *hl);
  if (objs == NULL || live == NULL || keep_hold == NULL || apply == NULL ||
      merged == NULL || hl == NULL) {
    rc = diag_set(diag, f->file, BW_E_NOMEM, 0, "", "out of memory");
    goto done;
  }
  /* The plan: what is live, what each live breaker takes. Nothing changes
   * yet. */
  for (size_t j = 0; j < f->nobjs; j++) {
    size_t i = f->by_kind[j];
    const section_t *s = &f->s[i];
    size_t k = s->kind;
    objs[i] = bw_registry_find(reg, kinds[k].rk, s->name);
    const char *part;
    if (objs[i] == NULL && kinds[k].ck == BW_CONFIG_HTTP &&
        (part = http_part_live(reg, s)) != NULL) {
      char key[64];
      snprintf(key, sizeof key, "[http.%s]", s->name);
      rc = diag_set(diag, f->file, BW_E_INVAL, s->line, key,
                    "a %s named '%s' is already in the registry (the "
                    "preset makes one)",
                    part, s->name);
      goto done;
    }
    if (objs[i] == NULL) {
      report->created++;
      report_line(&rp, "%s.%s: created", kinds[k].name, s->name);
      continue;
    }
    live[i] = true;
    if (kinds[k].ck == BW_CONFIG_BREAKER) {
      apply[i] = plan_breaker(s, objs[i], (void *)&merged[i], &rp);
    } else if (kinds[k].ck == BW_CONFIG_HTTP) {
      if ((hl[i] = bw_calloc(1, sizeof *hl[i])) == NULL) {
        rc = diag_set(diag, f->file, BW_E_NOMEM, 0, "", "out of memory");
        goto done;
      }
      plan_http(reg, s, hl[i], &rp);
    } else if (live_ops_of(kinds[k].ck) != NULL) {
      apply[i] =
          plan_live(live_ops_of(kinds[k].ck), s, objs[i], &merged[i], &rp);
    } else {
      report->kept++;
      report_line(&rp,
                  "%s.%s: kept as made: a live %s is not reconfigured "
                  "(restart to apply a change)",
                  kinds[k].name, s->name, kinds[k].name);
    }
  }
  if (rp.oom) {
    rc = diag_set(diag, f->file, BW_E_NOMEM, 0, "", "out of memory");
    goto done;
  }
  /* New objects first (the only step that can fail: memory, a full
   * registry), then the breakers' new thresholds. */
  for (size_t j = 0; j < f->nobjs; j++) {
    size_t i = f->by_kind[j];
    const section_t *s = &f->s[i];
    size_t k = s->kind;
    bw_error_t err;
    char key[64];
    if (live[i]) continue;
    if (kinds[k].ck == PIPELINE)
      for (uint32_t t = 0; t < s->nitems; t++)
        if (s->items[t].type == ITEM_OBJECT)
          keep_hold[s->items[t].ref] = true; /* it now points at it */
    objs[i] = make(reg, f, s, objs, &err);
    if (objs[i] == NULL) {
      snprintf(key, sizeof key, "[%s.%s]", sec_kind(s), s->name);
      rc = diag_set(diag, f->file, err.code, s->line, key, "%s", err.message);
      goto done;
    }
  }
  /* Checked in the plan: none of these can fail now. */
  for (size_t j = 0; j < f->nobjs; j++) {
    size_t i = f->objs[j];
    const live_ops_t *ops = live_ops_of(kinds[f->s[i].kind].ck);
    const http_live_t *h = hl[i];
    if (h != NULL) {
      if (h->apply_lim)
        live_ops_of(BW_CONFIG_LIMITER)->set(h->lim, &h->mlim, NULL);
      if (h->apply_b) bw_breaker_reconfigure(h->b, (const void *)&h->mb, NULL);
      if (h->apply_bu) live_ops_of(BW_CONFIG_BUDGET)->set(h->bu, &h->mbu, NULL);
      continue;
    }
    if (!live[i] || !apply[i]) continue;
    if (kinds[f->s[i].kind].ck == BW_CONFIG_BREAKER)
      bw_breaker_reconfigure(objs[i], (const void *)&merged[i], NULL);
    else if (ops != NULL)
      ops->set(objs[i], &merged[i], NULL);
  }
done:
  if (objs != NULL && live != NULL && keep_hold != NULL)
    for (size_t j = 0; j < f->nobjs; j++) {
      size_t i = f->objs[j];
      if (live[i] && kinds[f->s[i].kind].ck == BW_CONFIG_BREAKER &&
          !(rc == BW_OK && keep_hold[i]))
        bw_registry_put(reg, objs[i]);
    }
  if (hl != NULL)
    for (size_t i = 0; i < n; i++)
      if (hl[i] != NULL) {
        if (hl[i]->b != NULL) bw_registry_put(reg, hl[i]->b);
        bw_free(hl[i]);
      }
  bw_free(hl);
  if (rc != BW_OK) bw_config_reload_clear(report);
  if (report == &local_report) bw_config_reload_clear(report);
  bw_free(objs);
  bw_free(live);
  bw_free(keep_hold);
  bw_free(apply);
  bw_free(merged);
  bw_config_file_free(f);
  return rc;
}

int bw_registry_reload(bw_registry_t *reg, const char *path,
                       bw_config_reload_t *report, bw_error_t *err) {
  bw_config_diag_t d;
  return diag_to_error(bw_registry_reload_ex(reg, path, NULL, report, &d), &d,
                       err);
}
