/* The registry's collectors: metrics of objects the core does not know (the
 * curl driver's, a user's), written with the built-in families in both
 * exposition formats. See include/breakwater/registry.h and
 * docs/registry.md.
 *
 * At exposition time every collector runs in name order and emits samples
 * through bw__emit, which checks each one (names, labels, values, a family's
 * type and unit against its first sample, clashes with the built-in
 * families) and copies it. The samples are then grouped by family, families
 * in byte order, so each family's HELP/TYPE/UNIT lines appear once whatever
 * the number of collectors. Nothing here is a hot path: it allocates freely
 * and keeps its one lock for the whole exposition, so a collector removed
 * while a scrape runs waits for it, and is never called after its removal
 * returns. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "registry_collect.h"

typedef struct bw__coll_s {
  struct bw__coll_s *next; /* in byte order of name */
  bw_collect_fn fn;
  void *obj;
  uint64_t refused; /* samples refused, over the registry's life */
  bool up;          /* the last collection answered BW_OK */
  char *label;      /* the name, escaped as a label value */
  char name[];
} bw__coll_t;

struct bw__collectors_s {
  pthread_mutex_t lock; /* the list; held for a whole exposition */
  bw__coll_t *head;
  size_t count;
};

/* The collector set this thread is collecting from: a collector that calls
 * back into its own registry's collector functions gets BW_E_INVAL instead
 * of a deadlock. */
static _Thread_local const bw__collectors_t *bw__collecting;

bw__collectors_t *bw__collectors_new(void) {
  bw__collectors_t *c = bw_calloc(1, sizeof(*c));
  if (c == NULL) return NULL;
  if (pthread_mutex_init(&c->lock, NULL) != 0) {
    bw_free(c);
    return NULL;
  }
  return c;
}

void bw__collectors_free(bw__collectors_t *c) {
  bw__coll_t *k;
  if (c == NULL) return;
  k = c->head;
  while (k != NULL) {
    bw__coll_t *next = k->next;
    bw_free(k->label);
    bw_free(k);
    k = next;
  }
  pthread_mutex_destroy(&c->lock);
  bw_free(c);
}

/* ---- registering ----------------------------------------------------------
 */

int bw_registry_put_collector(bw_registry_t *reg, const char *name,
                              bw_collect_fn fn, void *obj, bw_error_t *err) {
  bw__collectors_t *c;
  bw__coll_t *k, **pp;
  size_t n, el;
  if (reg == NULL)
    return bw_error_set(err, BW_E_INVAL, "reg", "reg must not be NULL");
  if (name == NULL)
    return bw_error_set(err, BW_E_INVAL, "name", "name must not be NULL");
  n = strnlen(name, BW_NAME_MAX + 1);
  if (n == 0)
    return bw_error_set(err, BW_E_INVAL, "name", "name must not be empty");
  if (n > BW_NAME_MAX)
    return bw_error_set(err, BW_E_INVAL, "name",
                        "name must be at most %d bytes (got %zu or more)",
                        BW_NAME_MAX, n);
  if (fn == NULL)
    return bw_error_set(err, BW_E_INVAL, "fn", "fn must not be NULL");
  c = bw__registry_collectors(reg, true);
  if (c == NULL) return bw_error_set(err, BW_E_NOMEM, "", "out of memory");
  if (bw__collecting == c)
    return bw_error_set(err, BW_E_INVAL, "reg",
                        "a collector must not add collectors to its registry");
  k = bw_calloc(1, sizeof(*k) + n + 1);
  el = bw__escape_label(name, n, NULL);
  if (k != NULL) k->label = bw_malloc(el + 1);
  if (k == NULL || k->label == NULL) {
    if (k != NULL) bw_free(k);
    return bw_error_set(err, BW_E_NOMEM, "", "out of memory");
  }
  memcpy(k->name, name, n + 1);
  bw__escape_label(name, n, k->label);
  k->fn = fn;
  k->obj = obj;
  k->up = true;
  pthread_mutex_lock(&c->lock);
  for (pp = &c->head; *pp != NULL && strcmp((*pp)->name, name) < 0;
       pp = &(*pp)->next) {
  }
  if (*pp != NULL && strcmp((*pp)->name, name) == 0) {
    pthread_mutex_unlock(&c->lock);
    bw_free(k->label);
    bw_free(k);
    return bw_error_set(err, BW_E_INVAL, "name",
                        "a collector named '%s' is already registered", name);
  }
  k->next = *pp;
  *pp = k;
  c->count++;
  pthread_mutex_unlock(&c->lock);
  bw_error_clear(err);
  return BW_OK;
}

int bw_registry_remove_collector(bw_registry_t *reg, const char *name) {
  bw__collectors_t *c;
  bw__coll_t *k = NULL, **pp;
  if (reg == NULL || name == NULL) return BW_E_INVAL;
  c = bw__registry_collectors(reg, false);
  if (c == NULL) return BW_E_NOTFOUND;
  if (bw__collecting == c) return BW_E_INVAL;
  pthread_mutex_lock(&c->lock); /* waits for an exposition in progress */
  for (pp = &c->head; *pp != NULL; pp = &(*pp)->next)
    if (strcmp((*pp)->name, name) == 0) {
      k = *pp;
      *pp = k->next;
      c->count--;
      break;
    }
  pthread_mutex_unlock(&c->lock);
  if (k == NULL) return BW_E_NOTFOUND;
  bw_free(k->label);
  bw_free(k);
  return BW_OK;
}

size_t bw_registry_collector_count(bw_registry_t *reg) {
  bw__collectors_t *c;
  size_t n;
  if (reg == NULL) return 0;
  c = bw__registry_collectors(reg, false);
  if (c == NULL) return 0;
  pthread_mutex_lock(&c->lock);
  n = c->count;
  pthread_mutex_unlock(&c->lock);
  return n;
}

/* ---- checking and copying samples ---------------------------------------- */

typedef struct bw__cfam_s {
  char *name;
  size_t base_len; /* the OpenMetrics family name: a counter's without _total */
  bw_metric_type_t type;
  char *help;
  char *unit; /* NULL: none */
  size_t samples;
} bw__cfam_t;

typedef struct bw__csample_s {
  size_t fam;
  size_t rank; /* the family's place in byte order (set when writing) */
  size_t seq;  /* emission order, across collectors */
  const bw__coll_t *coll;
  char *labels; /* ,k="v"... escaped */
  char value[40];
} bw__csample_t;

typedef struct bw__cctx_s {
  bw__cfam_t *fams;
  size_t nfams, capf;
  bw__csample_t *v;
  size_t n, cap;
  bw__coll_t *cur; /* the collector running */
  bool nomem;
} bw__cctx_t;

/* The registry's own families about its collectors (written here). */
#define BW__COLL_UP "breakwater_registry_collector_up"
#define BW__COLL_REFUSED "breakwater_registry_collector_refused_total"

static bool bw__is_name(const char *s, size_t n) {
  size_t i;
  if (n == 0) return false;
  for (i = 0; i < n; i++) {
    char ch = s[i];
    bool alpha =
        (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
    if (!alpha && !(i > 0 && ch >= '0' && ch <= '9')) return false;
  }
  return true;
}

static bool bw__suffix(const char *s, size_t n, const char *suf) {
  size_t k = strlen(suf);
  return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* The OpenMetrics family name's length: a counter's without _total. */
static size_t bw__base_len(const char *name, bool counter) {
  size_t n = strlen(name);
  return counter && bw__suffix(name, n, "_total") ? n - 6 : n;
}

/* True when the families a (base length an) and b (bn) would read as one:
 * the same OpenMetrics name, or one is the other plus a sample suffix that
 * parsers strip (_total, _bucket, _sum, _count, _created, _info). */
static bool bw__clash(const char *a, size_t an, const char *b, size_t bn) {
  static const char *const sfx[] = {"_total", "_bucket",  "_sum",
                                    "_count", "_created", "_info"};
  size_t i;
  if (an == bn) return memcmp(a, b, an) == 0;
  if (an < bn) {
    const char *t = a;
    size_t tn = an;
    a = b;
    an = bn;
    b = t;
    bn = tn;
  }
  if (memcmp(a, b, bn) != 0) return false;
  for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
    if (an - bn == strlen(sfx[i]) && memcmp(a + bn, sfx[i], an - bn) == 0)
      return true;
  return false;
}

typedef struct bw__clash_q_s {
  const char *name;
  size_t base_len;
  const char *hit;
} bw__clash_q_t;

static void bw__clash_builtin(void *ud, const char *metric, const char *type) {
  bw__clash_q_t *q = ud;
  size_t bn = bw__base_len(metric, strcmp(type, "counter") == 0);
  if (q->hit == NULL && bw__clash(q->name, q->base_len, metric, bn))
    q->hit = metric;
}

/* A family name already used by the exposition, or NULL. */
static const char *bw__clashes(const bw__cctx_t *x, const char *name,
                               size_t base_len) {
  bw__clash_q_t q = {name, base_len, NULL};
  size_t i;
  bw__registry_foreach_family(bw__clash_builtin, &q);
  bw__clash_builtin(&q, BW__COLL_UP, "gauge");
  bw__clash_builtin(&q, BW__COLL_REFUSED, "counter");
  for (i = 0; q.hit == NULL && i < x->nfams; i++)
    if (bw__clash(name, base_len, x->fams[i].name, x->fams[i].base_len))
      q.hit = x->fams[i].name;
  return q.hit;
}

static char *bw__strdup(const char *s) {
  size_t n = strlen(s);
  char *d = bw_malloc(n + 1);
  if (d != NULL) memcpy(d, s, n + 1);
  return d;
}

/* ",k=\"v\"" for every label, escaped; NULL on out of memory. */
static char *bw__labels(const bw_metric_sample_t *s) {
  size_t i, n = 1;
  char *out, *p;
  for (i = 0; i < s->label_count; i++)
    n += strlen(s->labels[i].name) + 4 +
         bw__escape_label(s->labels[i].value, strlen(s->labels[i].value), NULL);
  out = bw_malloc(n);
  if (out == NULL) return NULL;
  p = out;
  *p = '\0';
  for (i = 0; i < s->label_count; i++) {
    size_t k = strlen(s->labels[i].name);
    *p++ = ',';
    memcpy(p, s->labels[i].name, k);
    p += k;
    *p++ = '=';
    *p++ = '"';
    p += bw__escape_label(s->labels[i].value, strlen(s->labels[i].value), p);
    *p++ = '"';
    *p = '\0';
  }
  return out;
}

/* Checks the sample's own fields (not against other samples). */
static int bw__check_sample(const bw_metric_sample_t *s, bw_error_t *err) {
  size_t n, i, j;
  bool counter;
  if (s == NULL)
    return bw_error_set(err, BW_E_INVAL, "sample", "sample must not be NULL");
  if (s->family == NULL)
    return bw_error_set(err, BW_E_INVAL, "family", "family must not be NULL");
  n = strnlen(s->family, BW_NAME_MAX + 1);
  if (n > BW_NAME_MAX)
    return bw_error_set(err, BW_E_INVAL, "family",
                        "family must be at most %d bytes", BW_NAME_MAX);
  if (!bw__is_name(s->family, n))
    return bw_error_set(err, BW_E_INVAL, "family",
                        "family must match [a-zA-Z_][a-zA-Z0-9_]* (got '%.*s')",
                        (int)(n > 64 ? 64 : n), s->family);
  if (s->type != BW_METRIC_COUNTER && s->type != BW_METRIC_GAUGE)
    return bw_error_set(err, BW_E_INVAL, "type",
                        "type must be BW_METRIC_COUNTER or BW_METRIC_GAUGE "
                        "(got %d)",
                        (int)s->type);
  counter = s->type == BW_METRIC_COUNTER;
  if (counter && !(n > 6 && bw__suffix(s->family, n, "_total")))
    return bw_error_set(err, BW_E_INVAL, "family",
                        "a counter's family must end in _total (got '%s')",
                        s->family);
  if (!counter && bw__suffix(s->family, n, "_total"))
    return bw_error_set(err, BW_E_INVAL, "family",
                        "only a counter's family may end in _total (got '%s')",
                        s->family);
  if (s->help == NULL || s->help[0] == '\0')
    return bw_error_set(err, BW_E_INVAL, "help",
                        "help must be a non-empty text (family %s)", s->family);
  if (s->unit != NULL) {
    size_t un = strlen(s->unit), bn = bw__base_len(s->family, counter);
    bool ok = un > 0 && un < bn;
    for (i = 0; ok && i < un; i++)
      ok = (s->unit[i] >= 'a' && s->unit[i] <= 'z') ||
           (s->unit[i] >= '0' && s->unit[i] <= '9') || s->unit[i] == '_';
    ok = ok && s->family[bn - un - 1] == '_' &&
         memcmp(s->family + bn - un, s->unit, un) == 0;
    if (!ok)
      return bw_error_set(err, BW_E_INVAL, "unit",
                          "unit must be [a-z0-9_]+ and the family's name must "
                          "end in _<unit>%s (family %s, unit '%s')",
                          counter ? "_total" : "", s->family, s->unit);
  }
  if (s->label_count > BW_METRIC_LABELS_MAX)
    return bw_error_set(err, BW_E_INVAL, "labels",
                        "at most %d labels per sample (got %zu)",
                        BW_METRIC_LABELS_MAX, s->label_count);
  if (s->label_count > 0 && s->labels == NULL)
    return bw_error_set(err, BW_E_INVAL, "labels",
                        "labels must not be NULL with label_count %zu",
                        s->label_count);
  for (i = 0; i < s->label_count; i++) {
    const char *ln = s->labels[i].name;
    size_t k = ln != NULL ? strnlen(ln, BW_NAME_MAX + 1) : 0;
    if (ln == NULL || k > BW_NAME_MAX || !bw__is_name(ln, k) ||
        strncmp(ln, "__", 2) == 0)
      return bw_error_set(err, BW_E_INVAL, "labels",
                          "labels[%zu].name must match [a-zA-Z_][a-zA-Z0-9_]* "
                          "and not start with __ (family %s)",
                          i, s->family);
    if (strcmp(ln, "name") == 0 || strcmp(ln, "le") == 0 ||
        strcmp(ln, "quantile") == 0)
      return bw_error_set(err, BW_E_INVAL, "labels",
                          "labels[%zu].name '%s' is reserved (name is the "
                          "collector's; le and quantile are histograms' and "
                          "summaries') (family %s)",
                          i, ln, s->family);
    if (s->labels[i].value == NULL)
      return bw_error_set(err, BW_E_INVAL, "labels",
                          "labels[%zu].value must not be NULL (family %s)", i,
                          s->family);
    for (j = 0; j < i; j++)
      if (strcmp(s->labels[j].name, ln) == 0)
        return bw_error_set(err, BW_E_INVAL, "labels",
                            "label %s appears twice (family %s)", ln,
                            s->family);
  }
  if (counter && !(isfinite(s->value) && s->value >= 0))
    return bw_error_set(err, BW_E_INVAL, "value",
                        "a counter's value must be finite and >= 0 "
                        "(family %s)",
                        s->family);
  return BW_OK;
}

/* Finds or adds the sample's family; SIZE_MAX with err when it conflicts. */
static size_t bw__family(bw__cctx_t *x, const bw_metric_sample_t *s,
                         bw_error_t *err) {
  size_t i, bn = bw__base_len(s->family, s->type == BW_METRIC_COUNTER);
  const char *hit;
  bw__cfam_t *f;
  for (i = 0; i < x->nfams; i++) {
    f = &x->fams[i];
    if (strcmp(f->name, s->family) != 0) continue;
    if (f->type != s->type) {
      bw_error_set(err, BW_E_INVAL, "type",
                   "family %s is a %s (its first sample's type), not a %s",
                   f->name, f->type == BW_METRIC_COUNTER ? "counter" : "gauge",
                   s->type == BW_METRIC_COUNTER ? "counter" : "gauge");
      return SIZE_MAX;
    }
    if ((f->unit == NULL) != (s->unit == NULL) ||
        (f->unit != NULL && strcmp(f->unit, s->unit) != 0)) {
      bw_error_set(err, BW_E_INVAL, "unit",
                   "family %s has unit '%s' (its first sample's), not '%s'",
                   f->name, f->unit != NULL ? f->unit : "",
                   s->unit != NULL ? s->unit : "");
      return SIZE_MAX;
    }
    return i;
  }
  hit = bw__clashes(x, s->family, bn);
  if (hit != NULL) {
    bw_error_set(err, BW_E_INVAL, "family",
                 "family %s would read as the family %s already in the "
                 "exposition",
                 s->family, hit);
    return SIZE_MAX;
  }
  if (x->nfams == x->capf) {
    size_t cap = x->capf != 0 ? x->capf * 2 : 16;
    bw__cfam_t *nf = bw_realloc(x->fams, cap * sizeof(*nf));
    if (nf == NULL) {
      x->nomem = true;
      return SIZE_MAX;
    }
    x->fams = nf;
    x->capf = cap;
  }
  f = &x->fams[x->nfams];
  memset(f, 0, sizeof(*f));
  f->name = bw__strdup(s->family);
  f->help = bw__strdup(s->help);
  f->unit = s->unit != NULL ? bw__strdup(s->unit) : NULL;
  f->type = s->type;
  f->base_len = bn;
  if (f->name == NULL || f->help == NULL ||
      (s->unit != NULL && f->unit == NULL)) {
    bw_free(f->name);
    bw_free(f->help);
    bw_free(f->unit);
    x->nomem = true;
    return SIZE_MAX;
  }
  return x->nfams++;
}

/* The emit function given to collectors. */
static int bw__emit(void *ctx, const bw_metric_sample_t *s, bw_error_t *err) {
  bw__cctx_t *x = ctx;
  bw__csample_t *e;
  size_t fam, i;
  char *labels;
  int rc;
  if (x == NULL) return BW_E_INVAL;
  if (x->nomem) return bw_error_set(err, BW_E_NOMEM, "", "out of memory");
  rc = bw__check_sample(s, err);
  if (rc == BW_OK) {
    fam = bw__family(x, s, err);
    if (fam == SIZE_MAX) rc = x->nomem ? BW_E_NOMEM : BW_E_INVAL;
  }
  if (rc != BW_OK) {
    if (rc == BW_E_INVAL) x->cur->refused++;
    if (rc == BW_E_NOMEM) bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return rc;
  }
  labels = bw__labels(s);
  if (labels == NULL) {
    x->nomem = true;
    return bw_error_set(err, BW_E_NOMEM, "", "out of memory");
  }
  /* One series per label set: a repeat would be a duplicate series. */
  for (i = 0; i < x->n; i++)
    if (x->v[i].fam == fam && x->v[i].coll == x->cur &&
        strcmp(x->v[i].labels, labels) == 0) {
      bw_free(labels);
      x->cur->refused++;
      return bw_error_set(err, BW_E_INVAL, "labels",
                          "family %s already has a sample with these labels "
                          "from collector %s",
                          s->family, x->cur->name);
    }
  if (x->n == x->cap) {
    size_t cap = x->cap != 0 ? x->cap * 2 : 64;
    bw__csample_t *nv = bw_realloc(x->v, cap * sizeof(*nv));
    if (nv == NULL) {
      bw_free(labels);
      x->nomem = true;
      return bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    }
    x->v = nv;
    x->cap = cap;
  }
  e = &x->v[x->n];
  e->fam = fam;
  e->seq = x->n;
  e->coll = x->cur;
  e->labels = labels;
  bw__fmt_double(s->value, e->value, sizeof(e->value));
  x->n++;
  bw_error_clear(err);
  return BW_OK;
}

/* ---- writing ----------------------------------------------------------------
 */

typedef struct bw__buf_s {
  char *p;
  size_t len, cap;
  bool nomem;
} bw__buf_t;

static void bw__put(bw__buf_t *b, const char *s, size_t n) {
  if (b->nomem || n == 0) return;
  if (b->cap - b->len < n + 1) {
    size_t cap = b->cap != 0 ? b->cap : 1024;
    char *np;
    while (cap - b->len < n + 1)
      cap *= 2;
    np = bw_realloc(b->p, cap);
    if (np == NULL) {
      b->nomem = true;
      return;
    }
    b->p = np;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void bw__puts(bw__buf_t *b, const char *s) {
  bw__put(b, s, strlen(s));
}

/* HELP text: invalid UTF-8 as U+FFFD, backslash and newline escaped, and in
 * OpenMetrics the double quote too (the Prometheus text format has no \"
 * escape in HELP). */
static void bw__put_help(bw__buf_t *b, const char *help, bool om) {
  size_t n = strlen(help), i;
  char *esc = bw_malloc(bw__escape_label(help, n, NULL) + 1);
  if (esc == NULL) {
    b->nomem = true;
    return;
  }
  bw__escape_label(help, n, esc);
  for (i = 0; esc[i] != '\0'; i++) {
    if (esc[i] == '\\' && esc[i + 1] == '"' && !om) {
      bw__put(b, "\"", 1);
      i++;
    } else if (esc[i] == '\\') {
      bw__put(b, esc + i, 2); /* \\ or \n or \" */
      i++;
    } else {
      bw__put(b, esc + i, 1);
    }
  }
  bw_free(esc);
}

static void bw__put_head(bw__buf_t *b, const char *name, size_t base_len,
                         const char *type, const char *help, const char *unit,
                         bool om) {
  size_t n = om ? base_len : strlen(name);
  bw__puts(b, "# HELP ");
  bw__put(b, name, n);
  bw__puts(b, " ");
  bw__put_help(b, help, om);
  bw__puts(b, "\n# TYPE ");
  bw__put(b, name, n);
  bw__puts(b, " ");
  bw__puts(b, type);
  bw__puts(b, "\n");
  if (om && unit != NULL) {
    bw__puts(b, "# UNIT ");
    bw__put(b, name, n);
    bw__puts(b, " ");
    bw__puts(b, unit);
    bw__puts(b, "\n");
  }
}

static void bw__put_sample(bw__buf_t *b, const char *family,
                           const char *coll_label, const char *labels,
                           const char *value) {
  bw__puts(b, family);
  bw__puts(b, "{name=\"");
  bw__puts(b, coll_label);
  bw__puts(b, "\"");
  bw__puts(b, labels);
  bw__puts(b, "} ");
  bw__puts(b, value);
  bw__puts(b, "\n");
}

typedef struct bw__order_s {
  const char *name;
  size_t fam;
} bw__order_t;

static int bw__cmp_order(const void *pa, const void *pb) {
  return strcmp(((const bw__order_t *)pa)->name,
                ((const bw__order_t *)pb)->name);
}

static int bw__cmp_sample(const void *pa, const void *pb) {
  const bw__csample_t *a = pa, *b = pb;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Sorts the samples by family name, then emission order. */
static bool bw__sort_samples(bw__cctx_t *x) {
  bw__order_t *ord;
  size_t *rank, i;
  if (x->n == 0) return true;
  ord = bw_malloc(x->nfams * sizeof(*ord));
  rank = bw_malloc(x->nfams * sizeof(*rank));
  if (ord == NULL || rank == NULL) {
    bw_free(ord);
    bw_free(rank);
    return false;
  }
  for (i = 0; i < x->nfams; i++) {
    ord[i].name = x->fams[i].name;
    ord[i].fam = i;
  }
  qsort(ord, x->nfams, sizeof(*ord), bw__cmp_order);
  for (i = 0; i < x->nfams; i++)
    rank[ord[i].fam] = i;
  for (i = 0; i < x->n; i++)
    x->v[i].rank = rank[x->v[i].fam];
  qsort(x->v, x->n, sizeof(*x->v), bw__cmp_sample);
  bw_free(ord);
  bw_free(rank);
  return true;
}

int bw__collectors_render(bw__collectors_t *c, bool om, char **text,
                          size_t *len) {
  bw__cctx_t x;
  bw__buf_t b;
  bw__coll_t *k;
  size_t i;
  *text = NULL;
  *len = 0;
  if (c == NULL) return BW_OK;
  if (bw__collecting == c) return BW_E_INVAL;
  memset(&x, 0, sizeof(x));
  memset(&b, 0, sizeof(b));
  pthread_mutex_lock(&c->lock);
  if (c->head == NULL) {
    pthread_mutex_unlock(&c->lock);
    return BW_OK;
  }
  bw__collecting = c;
  for (k = c->head; k != NULL && !x.nomem; k = k->next) {
    size_t start = x.n;
    x.cur = k;
    k->up = k->fn(k->obj, bw__emit, &x) == BW_OK;
    if (!k->up) { /* its object could not be read: none of its samples */
      for (i = start; i < x.n; i++)
        bw_free(x.v[i].labels);
      x.n = start;
    }
  }
  bw__collecting = NULL;
  if (!x.nomem) {
    char v[32];
    /* The registry's own families about its collectors, then theirs. */
    bw__put_head(&b, BW__COLL_UP, strlen(BW__COLL_UP), "gauge",
                 "1 when the collector's last collection succeeded, else 0 "
                 "(its samples are then absent).",
                 NULL, om);
    for (k = c->head; k != NULL; k = k->next)
      bw__put_sample(&b, BW__COLL_UP, k->label, "", k->up ? "1" : "0");
    bw__put_head(&b, BW__COLL_REFUSED, bw__base_len(BW__COLL_REFUSED, true),
                 "counter",
                 "Samples a collector emitted that the registry refused (a "
                 "bad name, label or value, or a family conflict).",
                 NULL, om);
    for (k = c->head; k != NULL; k = k->next) {
      snprintf(v, sizeof(v), "%llu", (unsigned long long)k->refused);
      bw__put_sample(&b, BW__COLL_REFUSED, k->label, "", v);
    }
    /* Families in byte order, each family's samples in collector order
     * (collectors run in name order), then in emission order. */
    if (!bw__sort_samples(&x)) x.nomem = true;
    for (i = 0; !x.nomem && i < x.n; i++) {
      const bw__cfam_t *f = &x.fams[x.v[i].fam];
      if (i == 0 || x.v[i - 1].fam != x.v[i].fam)
        bw__put_head(&b, f->name, f->base_len,
                     f->type == BW_METRIC_COUNTER ? "counter" : "gauge",
                     f->help, f->unit, om);
      bw__put_sample(&b, f->name, x.v[i].coll->label, x.v[i].labels,
                     x.v[i].value);
    }
  }
  pthread_mutex_unlock(&c->lock);
  for (i = 0; i < x.n; i++)
    bw_free(x.v[i].labels);
  for (i = 0; i < x.nfams; i++) {
    bw_free(x.fams[i].name);
    bw_free(x.fams[i].help);
    bw_free(x.fams[i].unit);
  }
  bw_free(x.v);
  bw_free(x.fams);
  if (x.nomem || b.nomem) {
    bw_free(b.p);
    return BW_E_NOMEM;
  }
  *text = b.p;
  *len = b.len;
  return BW_OK;
}
