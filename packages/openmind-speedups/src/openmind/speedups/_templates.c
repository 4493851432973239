/* openmind.speedups._templates: the C side of openmind-nlp's native chat-template renders.
 *
 * fill_layout(cache, messages, needs_first_content) -> str | None
 *
 * The "layout" families of openmind.nlp.templates (a message's text is its content, as written,
 * between texts that depend on the roles alone) cache, per role sequence, the list of
 * 2 * len(roles) + 1 texts whose odd places the contents fill. In Python the render is two
 * C-level passes (roles, contents) and a join; here it is one pass and a join, with no Python
 * frame per call. The result is exactly "".join(texts with the contents at the odd places),
 * written straight into one new string (measured once, copied once).
 *
 * None means "not handled here": the caller then renders the same conversation through its
 * Python path, which makes the layout, refuses bad input with its coded errors and renders
 * everything this function declines. It declines whatever is not the plain case: a messages
 * object that is not exactly a list, a message that is not exactly a dict, a role or content
 * that is missing or not exactly a str, a role sequence not in the cache, an empty first content
 * when needs_first_content is true, or a cached entry of the wrong shape. It never runs Python
 * code of its own (exact dicts, str keys and values), so the messages cannot change under it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *key_role;
static PyObject *key_content;

/* the contents of up to this many messages are held on the stack (more: on the heap) */
#define SMALL 64

/* add a piece's length and widest character to the result's */
static inline int
measure(PyObject *piece, Py_ssize_t *length, Py_UCS4 *maxchar)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(piece);
    if (len > PY_SSIZE_T_MAX - *length) {
        PyErr_SetString(PyExc_OverflowError, "rendered text too long");
        return -1;
    }
    *length += len;
    if (len) {
        Py_UCS4 widest = PyUnicode_MAX_CHAR_VALUE(piece);
        if (widest > *maxchar)
            *maxchar = widest;
    }
    return 0;
}

/* copy a piece into the result at *at (the result is at least as wide as every piece) */
static inline void
put(PyObject *out, int kind, void *data, PyObject *piece, Py_ssize_t *at)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(piece);
    if (len == 0)
        return;
    if (PyUnicode_KIND(piece) == kind)
        memcpy((char *)data + *at * kind, PyUnicode_DATA(piece), (size_t)len * kind);
    else
        PyUnicode_CopyCharacters(out, *at, piece, 0, len); /* a narrower piece: widened */
    *at += len;
}

static PyObject *
fill_layout(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "fill_layout(cache, messages, needs_first_content) takes 3 arguments");
        return NULL;
    }
    PyObject *cache = args[0], *messages = args[1];
    int needs_first = PyObject_IsTrue(args[2]);
    if (needs_first < 0)
        return NULL;
    if (!PyDict_CheckExact(cache) || !PyList_CheckExact(messages))
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(messages);
    if (n == 0)
        Py_RETURN_NONE;

    PyObject *small[SMALL];
    PyObject **contents = n <= SMALL ? small : PyMem_Malloc(sizeof(PyObject *) * (size_t)n);
    if (contents == NULL)
        return PyErr_NoMemory();
    Py_ssize_t held = 0; /* contents[0:held] are owned references */
    PyObject *result = NULL;
    PyObject *roles = PyTuple_New(n);
    if (roles == NULL)
        goto done;
    Py_ssize_t length = 0;
    Py_UCS4 maxchar = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        /* a dict lookup can run Python code (a colliding key's __eq__), which could change the
           list: check its size again and hold the message while reading it */
        if (PyList_GET_SIZE(messages) != n)
            goto decline;
        PyObject *m = PyList_GET_ITEM(messages, i);
        if (!PyDict_CheckExact(m))
            goto decline;
        Py_INCREF(m);
        PyObject *role = PyDict_GetItemWithError(m, key_role); /* borrowed: owned at once */
        if (role == NULL || !PyUnicode_CheckExact(role)) {
            Py_DECREF(m);
            goto decline_or_fail;
        }
        Py_INCREF(role);
        PyTuple_SET_ITEM(roles, i, role);
        PyObject *content = PyDict_GetItemWithError(m, key_content);
        if (content == NULL || !PyUnicode_CheckExact(content)) {
            Py_DECREF(m);
            goto decline_or_fail;
        }
        Py_INCREF(content);
        contents[held++] = content;
        Py_DECREF(m);
        if (i == 0 && needs_first && PyUnicode_GET_LENGTH(content) == 0)
            goto decline;
        if (measure(content, &length, &maxchar) < 0)
            goto done;
    }
    PyObject *texts = PyDict_GetItemWithError(cache, roles); /* borrowed: held below */
    if (texts == NULL)
        goto decline_or_fail;
    if (!PyList_CheckExact(texts) || PyList_GET_SIZE(texts) != 2 * n + 1)
        goto decline;
    Py_INCREF(texts);
    for (Py_ssize_t i = 0; i <= n; i++) {
        PyObject *text = PyList_GET_ITEM(texts, 2 * i);
        if (!PyUnicode_CheckExact(text)) {
            Py_DECREF(texts);
            goto decline;
        }
        if (measure(text, &length, &maxchar) < 0) {
            Py_DECREF(texts);
            goto done;
        }
    }
    result = PyUnicode_New(length, maxchar);
    if (result != NULL) {
        int kind = PyUnicode_KIND(result);
        void *data = PyUnicode_DATA(result);
        Py_ssize_t at = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            put(result, kind, data, PyList_GET_ITEM(texts, 2 * i), &at);
            put(result, kind, data, contents[i], &at);
        }
        put(result, kind, data, PyList_GET_ITEM(texts, 2 * n), &at);
    }
    Py_DECREF(texts);
    goto done;

decline_or_fail:
    if (PyErr_Occurred())
        goto done; /* result stays NULL: the error propagates */
decline:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(roles); /* a tuple with NULL slots deallocates fine */
    for (Py_ssize_t i = 0; i < held; i++)
        Py_DECREF(contents[i]);
    if (contents != small)
        PyMem_Free(contents);
    return result;
}

static PyMethodDef methods[] = {
    {"fill_layout", (PyCFunction)(void (*)(void))fill_layout, METH_FASTCALL,
     "fill_layout(cache, messages, needs_first_content) -> str | None\n\n"
     "The render of ``messages`` from the texts ``cache`` holds for their role sequence, or None\n"
     "when the call is not the plain case (see openmind.nlp.templates.native)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "openmind.speedups._templates",
    "C speedups of openmind-nlp's native chat-template renders.",
    -1,
    methods,
};

PyMODINIT_FUNC
PyInit__templates(void)
{
    key_role = PyUnicode_InternFromString("role");
    key_content = PyUnicode_InternFromString("content");
    if (key_role == NULL || key_content == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
