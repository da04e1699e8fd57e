/* breakwater._hot — the hot path of a breaker decorator, in the CPython C
 * API.
 *
 * A decorated call is: acquire a permit, call the function, release the
 * permit with the call's outcome. Through cffi each of the two C calls costs
 * a Python-level call plus a GIL release and re-acquire (about 70-120 ns
 * each here), which is most of the decorator's overhead. This module makes
 * the decorated function a C callable (vectorcall) that calls the breaker's
 * acquire and release directly, with the GIL held (they never block: a few
 * atomics), the permit on the C stack.
 *
 * The breaker's functions and object come in as addresses (cffi's
 * ffi.addressof(lib, "bw_breaker_acquire") and the object pointer), so this
 * module links nothing. What is Python stays in Python: the outcome of an
 * exception (ignore, rejections, timeouts) is decided by a callable, the
 * refusal exception is built by another. Nothing here allocates per call. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

#include <breakwater/common.h>

typedef int (*acquire_fn)(void *obj, bw_permit_t *p);
typedef int (*release_fn)(void *obj, const bw_permit_t *p, bw_outcome_t o);

typedef struct {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject *fn;      /* the decorated callable */
  PyObject *outcome; /* outcome(exc) -> int: a bw_outcome_t */
  PyObject *refused; /* refused() -> the exception to raise */
  PyObject *owner;   /* keeps the breaker (and its C object) alive */
  PyObject *dict;    /* __dict__: functools.update_wrapper writes there */
  acquire_fn acquire;
  release_fn release;
  void *obj;
} guarded_t;

/* The outcome of the exception being raised (BW_FAILURE if the classifier
 * itself fails: a broken classifier must not turn failures into successes).
 * The exception is put back as it was. */
static bw_outcome_t classify(guarded_t *g) {
  PyObject *type, *value, *tb;
  long v = BW_FAILURE;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb != NULL && value != NULL) PyException_SetTraceback(value, tb);
  PyObject *o =
      PyObject_CallOneArg(g->outcome, value != NULL ? value : Py_None);
  if (o != NULL) {
    v = PyLong_AsLong(o);
    Py_DECREF(o);
    if (v == -1 && PyErr_Occurred()) v = BW_FAILURE;
  }
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
  return (bw_outcome_t)v;
}

static PyObject *guarded_vectorcall(PyObject *self, PyObject *const *args,
                                    size_t nargsf, PyObject *kwnames) {
  guarded_t *g = (guarded_t *)self;
  bw_permit_t permit;
  if (g->acquire(g->obj, &permit) != BW_OK) {
    PyObject *exc = PyObject_CallNoArgs(g->refused);
    if (exc != NULL) {
      PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
      Py_DECREF(exc);
    }
    return NULL;
  }
  PyObject *res = PyObject_Vectorcall(g->fn, args, nargsf, kwnames);
  g->release(g->obj, &permit, res != NULL ? BW_SUCCESS : classify(g));
  return res;
}

static PyObject *guarded_new(PyTypeObject *type, PyObject *args,
                             PyObject *kwds) {
  PyObject *fn, *outcome, *refused, *owner;
  unsigned long long acq, rel, obj;
  static char *kwlist[] = {"fn",      "outcome", "refused", "owner",
                           "acquire", "release", "obj",     NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOKKK", kwlist, &fn, &outcome,
                                   &refused, &owner, &acq, &rel, &obj))
    return NULL;
  if (!PyCallable_Check(fn) || !PyCallable_Check(outcome) ||
      !PyCallable_Check(refused)) {
    PyErr_SetString(PyExc_TypeError,
                    "fn, outcome and refused must be callable");
    return NULL;
  }
  if (acq == 0 || rel == 0 || obj == 0) {
    PyErr_SetString(PyExc_ValueError, "acquire, release and obj must be set");
    return NULL;
  }
  guarded_t *g = (guarded_t *)type->tp_alloc(type, 0);
  if (g == NULL) return NULL;
  g->vectorcall = guarded_vectorcall;
  Py_INCREF(fn);
  g->fn = fn;
  Py_INCREF(outcome);
  g->outcome = outcome;
  Py_INCREF(refused);
  g->refused = refused;
  Py_INCREF(owner);
  g->owner = owner;
  g->dict = NULL;
  g->acquire = (acquire_fn)(uintptr_t)acq;
  g->release = (release_fn)(uintptr_t)rel;
  g->obj = (void *)(uintptr_t)obj;
  return (PyObject *)g;
}

static int guarded_traverse(PyObject *self, visitproc visit, void *arg) {
  guarded_t *g = (guarded_t *)self;
  Py_VISIT(g->fn);
  Py_VISIT(g->outcome);
  Py_VISIT(g->refused);
  Py_VISIT(g->owner);
  Py_VISIT(g->dict);
  return 0;
}

static int guarded_clear(PyObject *self) {
  guarded_t *g = (guarded_t *)self;
  Py_CLEAR(g->fn);
  Py_CLEAR(g->outcome);
  Py_CLEAR(g->refused);
  Py_CLEAR(g->owner);
  Py_CLEAR(g->dict);
  return 0;
}

static void guarded_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  guarded_clear(self);
  Py_TYPE(self)->tp_free(self);
}

/* A decorated method binds like a function. */
static PyObject *guarded_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)type;
  if (obj == NULL || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

static PyGetSetDef guarded_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject guarded_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "breakwater._hot.Guarded",
    .tp_doc = "A function protected by a breaker (C hot path).",
    .tp_basicsize = sizeof(guarded_t),
    .tp_flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = guarded_new,
    .tp_traverse = guarded_traverse,
    .tp_clear = guarded_clear,
    .tp_dealloc = guarded_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(guarded_t, vectorcall),
    .tp_descr_get = guarded_get,
    .tp_dictoffset = offsetof(guarded_t, dict),
    .tp_getset = guarded_getset,
};

static struct PyModuleDef hot_module = {
    PyModuleDef_HEAD_INIT, .m_name = "breakwater._hot",
    .m_doc = "The C hot path of breakwater's breaker decorators.",
    .m_size = -1};

PyMODINIT_FUNC PyInit__hot(void) {
  if (PyType_Ready(&guarded_type) < 0) return NULL;
  PyObject *m = PyModule_Create(&hot_module);
  if (m == NULL) return NULL;
  Py_INCREF(&guarded_type);
  if (PyModule_AddObject(m, "Guarded", (PyObject *)&guarded_type) < 0) {
    Py_DECREF(&guarded_type);
    Py_DECREF(m);
    return NULL;
  }
  if (PyModule_AddIntConstant(m, "PERMIT_SIZE", (long)sizeof(bw_permit_t)) <
      0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
