#!/usr/bin/env python3
"""gen_fortran.py -- Proust MPI's Fortran bindings, generated from the MPI
Forum's API description (pympistandard) and Proust's own mpi.h.

  gen_fortran.py constants --mpi-h include/mpi.h --out consts.c
      a C program that prints every integer constant of mpi.h ("NAME VALUE")
  gen_fortran.py bindings --mpi-h include/mpi.h --consts consts.txt --out DIR
      DIR/mpif.h, DIR/mpi.f90 (the mpi module) and DIR/f77_wrappers.c (the
      mpi_x_ / pmpi_x_ entry points)
  gen_fortran.py list --mpi-h include/mpi.h
      which procedures are bound, and why the others are not yet

The standard's data says what each parameter is (a buffer, a status, a
string, a logical, an index...); mpi.h says its C type. Handles, MPI_Fint
and default INTEGER are all C int in Proust, so most arguments pass
through; a role in ROLES says what a wrapper does for the others. A
procedure with a parameter of a role not handled yet gets no binding (the
program then fails to link, it never gets a wrong one). docs/FORTRAN-PLAN.md
is the plan these steps follow (issue 42).
"""
import argparse
import re
import sys

import pympistandard as std

import mpi_f08_module as f08
from mpi_module import OFFSET_CONSTANTS, emit_module

# Parameters whose Fortran form the wrappers do not handle yet: procedures
# that have one are not bound (issue 42's next steps).
# Callbacks whose Fortran form is called as C calls them (every argument
# by reference): the procedure's address passes through. The others
# (attribute copy/delete, generalized requests) need the C side to call
# them the Fortran way: not yet.
PASS_FUNCTIONS = {"MPI_User_function", "MPI_Comm_errhandler_function",
                  "MPI_Win_errhandler_function", "MPI_Session_errhandler_function",
                  "MPI_File_errhandler_function"}
UNHANDLED_KINDS = {"C_BUFFER3", "C_BUFFER4", "STRING_ARRAY", "ARGUMENT_LIST_2D"}
# Procedures written by hand in src/mpi/fortran (fortran_glue.c,
# fortran_callbacks.c): callbacks that C calls another way than Fortran,
# and a length that is in and out.
HAND_WRITTEN = {"MPI_Comm_create_keyval", "MPI_Type_create_keyval", "MPI_Win_create_keyval",
                "MPI_Keyval_create", "MPI_Grequest_start", "MPI_Info_get_string",
                "MPI_Session_get_nth_pset"}
# The predefined procedures a Fortran program passes by name
# (fortran_callbacks.c): EXTERNAL in mpif.h.
PREDEFINED_PROCEDURES = [
    "MPI_NULL_COPY_FN", "MPI_DUP_FN", "MPI_NULL_DELETE_FN",
    "MPI_COMM_NULL_COPY_FN", "MPI_COMM_DUP_FN", "MPI_COMM_NULL_DELETE_FN",
    "MPI_TYPE_NULL_COPY_FN", "MPI_TYPE_DUP_FN", "MPI_TYPE_NULL_DELETE_FN",
    "MPI_WIN_NULL_COPY_FN", "MPI_WIN_DUP_FN", "MPI_WIN_NULL_DELETE_FN",
]
# The procedures whose INDEX parameters are positions in a Fortran array
# (1-based there): the others (Cart_shift...) are ranks or counts.
INDEX_PLUS_ONE = {"MPI_Waitany", "MPI_Testany", "MPI_Waitsome", "MPI_Testsome",
                  "MPI_Request_get_status_any", "MPI_Request_get_status_some"}
# Functions (not subroutines) in Fortran: their C return type is kept.
FUNCTIONS = {"MPI_Wtime": "double", "MPI_Wtick": "double", "MPI_Aint_add": "MPI_Aint",
             "MPI_Aint_diff": "MPI_Aint"}
# Sentinels: C storage whose address a Fortran program passes (COMMON
# blocks of mpif.h), and the C value it stands for.
SENTINELS = [
    # (Fortran name, COMMON block, Fortran declaration, ints of storage, C value)
    ("MPI_BOTTOM", "proust_mpi_bottom", "INTEGER MPI_BOTTOM", 1, "MPI_BOTTOM"),
    ("MPI_IN_PLACE", "proust_mpi_in_place", "INTEGER MPI_IN_PLACE", 1, "MPI_IN_PLACE"),
    ("MPI_STATUS_IGNORE", "proust_mpi_status_ignore",
     "INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)", 6, "MPI_STATUS_IGNORE"),
    ("MPI_STATUSES_IGNORE", "proust_mpi_statuses_ignore",
     "INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)", 6, "MPI_STATUSES_IGNORE"),
    ("MPI_UNWEIGHTED", "proust_mpi_unweighted", "INTEGER MPI_UNWEIGHTED(1)", 1,
     "MPI_UNWEIGHTED"),
    ("MPI_WEIGHTS_EMPTY", "proust_mpi_weights_empty", "INTEGER MPI_WEIGHTS_EMPTY(1)", 1,
     "MPI_WEIGHTS_EMPTY"),
]


def load_standard():
    std.use_api_version(1)
    return {p._parseset["name"]: p for p in std.PROCEDURES.values()}


def c_prototypes(path):
    """name -> [(type, name)] of every `int MPI_X(...)`-like prototype."""
    src = re.sub(r"/\*.*?\*/", " ", open(path).read(), flags=re.S)
    src = re.sub(r"//[^\n]*", " ", src)
    protos = {}
    for m in re.finditer(r"^\s*(int|double|MPI_Aint|MPI_Fint)\s+(MPI_\w+)\s*\(([^;{]*?)\)\s*;",
                         src, flags=re.M):
        ret, name, args = m.group(1), m.group(2), " ".join(m.group(3).split())
        params = []
        if args not in ("", "void"):
            for a in args.split(","):
                a = a.strip()
                pm = re.match(r"(.*?[\s*])(\w+)\s*(\[\s*\w*\s*\]\s*)*$", a)
                if not pm or pm.group(1).strip() in ("", "const"):
                    params = None  # unnamed parameters: not a procedure we bind
                    break
                dims = re.findall(r"\[\s*(\w*)\s*\]", a)
                ctype = pm.group(1).strip()
                if len(dims) == 2:  # int ranges[][3]: a pointer to rows
                    ctype += f"(*)[{dims[1]}]"
                elif dims:
                    ctype += "[]"
                params.append((ctype, pm.group(2)))
        if params is not None:
            protos[name] = (ret, params)
    return protos


class Unbound(Exception):
    pass


def plan(name, proc, proto):
    """The wrapper of one procedure: [(fortran arg, c type, role, param dict)]."""
    ret, cparams = proto
    # (large_only: a parameter of the _c form alone: MPI_Type_get_contents)
    fparams = [q for q in proc._parseset["parameters"]
               if "c_parameter" not in (q.get("suppress") or "") and not q.get("large_only")]
    if len(fparams) != len(cparams):
        raise Unbound(f"{len(fparams)} parameters in the standard, {len(cparams)} in mpi.h")
    out = []
    for q, (ctype, cname) in zip(fparams, cparams):
        kind, supp = q["kind"], q.get("suppress") or ""
        if "f90_parameter" in supp:
            role = "dropped"
        elif kind in UNHANDLED_KINDS:
            raise Unbound(f"parameter {q['name']} of kind {kind}")
        elif kind in ("FUNCTION", "POLYFUNCTION"):
            if q.get("func_type") not in PASS_FUNCTIONS:
                raise Unbound(f"callback {q['name']} ({q.get('func_type')})")
            role = "pass"
        elif kind in ("ATTRIBUTE_VAL", "ATTRIBUTE_VAL_10"):
            # reading one: predefined attributes and values alike (fortran_glue.c);
            # setting one stores the value itself as the C pointer
            role = "attr_out" if q["param_direction"] == "out" else "attr_in"
            role += "_int" if kind == "ATTRIBUTE_VAL_10" else ""
        elif kind == "C_BUFFER":  # a C pointer out, as INTEGER(KIND=MPI_ADDRESS_KIND)
            role = "address_out"
        elif kind == "C_BUFFER2":  # MPI_Buffer_detach: Fortran has no use for the address
            role = "address_dropped"
        elif kind in ("EXTRA_STATE", "EXTRA_STATE2"):
            raise Unbound(f"extra state {q['name']} of a callback")
        elif kind == "BUFFER":
            role = "buffer"
        elif kind == "WEIGHT":  # an array, or MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY
            role = "weights"
        elif kind == "STATUS":
            role = "status" if q["length"] is None else "statuses"
        elif kind == "STRING":
            length = q["length"]
            if q["param_direction"] == "in" and length in (None, "*"):
                role = "string_in"
            elif q["param_direction"] == "out" and str(length).startswith("MPI_MAX_"):
                role = "string_out"
            elif q["param_direction"] == "out" and length == "valuelen":  # MPI_Info_get
                role = "string_out"
                q = dict(q, length="*valuelen")
            elif q["param_direction"] == "out" and name == "MPI_Info_get_nthkey":
                role = "string_out"
                q = dict(q, length="MPI_MAX_INFO_KEY")
            elif q["param_direction"] == "out" and name == "MPI_File_get_view":
                role = "string_out"  # the standard's text: at most MPI_MAX_DATAREP_STRING
                q = dict(q, length="MPI_MAX_DATAREP_STRING")
            else:
                raise Unbound(f"string {q['name']} ({q['param_direction']}, {length})")
        elif kind == "LOGICAL":
            role = "logical_in" if q["param_direction"] == "in" and "[" not in ctype and \
                "*" not in ctype else "pass"
        elif kind == "INDEX" and name in INDEX_PLUS_ONE:
            role = "index"
        else:
            role = "pass"
        if role == "pass" and "*" not in ctype and "[]" not in ctype:
            role = "value"
        out.append((q["name"].lower(), ctype, cname, role, q))
    return out


def pointer_type(ctype):
    """The C type of the pointer a Fortran argument arrives as."""
    base = ctype.replace("const ", "").replace("[]", "").replace("*", "").strip()
    return base + " *"


def wrapper(name, proc, proto, profile, suffix=""):
    """C source of mpi_x_ (or pmpi_x_ with profile; mpi_x_cptr_ with
    suffix "cptr_", the C pointer form of the mpi module and mpi_f08: same
    ABI, but MPI_Buffer_detach's address is returned there; mpi_x_c_ with
    suffix "c_", the large-count form that mpi_f08 calls)."""
    target = ("P" if profile else "") + name + ("_c" if suffix.startswith("c_") else "")
    fname = ("p" if profile else "") + name.lower() + "_" + suffix
    ret = FUNCTIONS.get(name)
    steps = plan(name, proc, proto)
    if suffix.endswith("cptr_"):
        steps = [(fa, ct, cn, "address_out" if role == "address_dropped" else role, q)
                 for fa, ct, cn, role, q in steps]
    args, before, call, after, hidden = [], [], [], [], []
    # Waitsome & co.: how many indices and statuses the call filled
    filled = "*outcount" if any(st[0] == "outcount" for st in steps) else None
    for fa, ctype, cname, role, q in steps:
        if role == "dropped":
            call.append("NULL" if "*" in ctype or "[]" in ctype else "0")
            continue
        if role == "buffer":
            args.append(f"void *{fa}")
            call.append(f"pm_f_buffer({fa})")
        elif role == "weights":
            args.append(f"int *{fa}")
            call.append(f"(int *)pm_f_sentinel_c({fa})")
        elif role == "value":
            args.append(f"{pointer_type(ctype)}{fa}")
            call.append(f"*{fa}")
        elif role == "logical_in":
            args.append(f"MPI_Fint *{fa}")
            call.append(f"(*{fa} != 0)")
        elif role == "pass" and "(*)" in ctype:  # rows of a 2-D array
            args.append(f"MPI_Fint *{fa}")
            call.append(f"({ctype.replace('const ', '')}){fa}")
        elif role == "pass" or role == "index":
            args.append(f"{pointer_type(ctype)}{fa}")
            call.append(f"({ctype.replace('[]', '*')}){fa}" if "const" in ctype else fa)
            if role == "index" and q["length"] is None:
                # (an error may leave it unset: then MPI_UNDEFINED, left as is)
                before.append(f"*{fa} = MPI_UNDEFINED;")
                after.append(f"free:pm_f_index_plus_one({fa}, 1);")
            elif role == "index":  # Waitsome & co.: filled on MPI_ERR_IN_STATUS too
                n = filled or "*count"
                after.append(f"free:if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) "
                             f"pm_f_index_plus_one({fa}, {n});")
        elif role == "status":
            args.append(f"MPI_Fint *{fa}")
            # in (MPI_Get_count & co read it), and out too: the fields a call
            # leaves alone (MPI_ERROR of single completions) stay as they were
            before.append(f"MPI_Status {fa}_tmp, *{fa}_c = pm_f_status({fa}, &{fa}_tmp);")
            call.append(f"{fa}_c")
            if q["param_direction"] in ("out", "inout"):
                after.append(f"free:pm_f_status_done({fa}, {fa}_c, &{fa}_tmp);")
        elif role == "statuses":
            args.append(f"MPI_Fint *{fa}")
            incount = next(s[0] for s in steps if s[0] in ("count", "incount"))
            outn = filled or f"*{incount}"
            before.append(f"MPI_Status *{fa}_c = pm_f_statuses({fa}, *{incount});")
            call.append(f"({fa}_c ? {fa}_c : MPI_STATUSES_IGNORE)")
            after.append(f"free:pm_f_statuses_done({fa}, {fa}_c, rc == MPI_SUCCESS || "
                         f"rc == MPI_ERR_IN_STATUS ? {outn} : 0);")
        if role.startswith("attr_"):  # the values of Fortran (attr_language.h)
            lang = "INT" if role.endswith("_int") else "AINT"
            before.append(f"int lang_was = proust_mpi_attr_language(PROUST_MPI_ATTR_FORTRAN_{lang});")
            after.append("free:proust_mpi_attr_language(lang_was);")
        if role in ("attr_out", "attr_out_int"):
            ftype = "MPI_Aint" if role == "attr_out" else "MPI_Fint"
            obj = {"MPI_Win": "'w'", "MPI_Type": "'t'"}.get(name[:8].rstrip("_"), "'c'")
            keyval = next(st[0] for st in steps if st[0].endswith("keyval"))
            args.append(f"{ftype} *{fa}")
            before.append(f"void *{fa}_c = NULL;")
            call.append(f"&{fa}_c")
            after.append(f"if (*flag) *{fa} = ({ftype})pm_f_attr_value({obj}, *{keyval}, "
                         f"{fa}_c);")
        elif role in ("attr_in", "attr_in_int"):
            args.append(f"{'MPI_Aint' if role == 'attr_in' else 'MPI_Fint'} *{fa}")
            call.append(f"(void *)(intptr_t)*{fa}")
        elif role == "address_out":
            args.append(f"MPI_Aint *{fa}")
            before.append(f"void *{fa}_c = NULL;")
            call.append(f"&{fa}_c")
            after.append(f"*{fa} = (MPI_Aint)(intptr_t){fa}_c;")
        elif role == "address_dropped":
            args.append(f"void *{fa}")
            before.append(f"void *{fa}_c = NULL;")
            before.append(f"(void){fa};")
            call.append(f"&{fa}_c")
        elif role == "string_in":
            args.append(f"const char *{fa}")
            hidden.append(f"size_t {fa}_len")
            # info keys and values lose their leading blanks too (MPI-4.1 10.1)
            strip = "pm_f_string_in_info" if name.startswith("MPI_Info_") else "pm_f_string_in"
            before.append(f"char *{fa}_c = {strip}({fa}, {fa}_len);")
            call.append(f"{fa}_c")
            after.append(f"free:free({fa}_c);")
        elif role == "string_out":
            args.append(f"char *{fa}")
            hidden.append(f"size_t {fa}_len")
            before.append(f"char *{fa}_c = pm_f_string_buf({q['length']});")
            call.append(f"{fa}_c")
            # (a value not found leaves the argument as it was: MPI_Info_get)
            found = " && *flag" if any(st[0] == "flag" for st in steps) else ""
            after.append(f"if ({fa}_c{found}) pm_f_string_out({fa}_c, {fa}, {fa}_len);")
            after.append(f"free:free({fa}_c);")
    if ret:
        sig = f"{ret} {fname}({', '.join(args + hidden) or 'void'})"
        body = [f"return {target}({', '.join(call)});"]
    else:
        args.append("MPI_Fint *ierror")
        sig = f"void {fname}({', '.join(args + hidden)})"
        body = before + [f"int rc = {target}({', '.join(call)});"]
        # "free:" steps run whatever the call said (they release memory);
        # the others define outputs, only where the call succeeded
        outputs = [a for a in after if not a.startswith("free:")]
        if outputs:
            body += ["if (rc == MPI_SUCCESS) {"] + ["    " + a for a in outputs] + ["}"]
        body += [a[len("free:"):] for a in after if a.startswith("free:")]
        body += ["*ierror = rc;"]
    return f"{sig};\n{sig}\n{{\n" + "".join(f"    {b}\n" for b in body) + "}\n"


def bound(procs, protos):
    """(name, proc) of every procedure bound, and {name: why not} of the others."""
    ok, why = [], {}
    for name in sorted(protos):
        if name.startswith("PMPI_") or name not in procs:
            continue
        proc = procs[name]
        if proc.express.f90 is None:
            why[name] = "no Fortran form in the standard"
            continue
        if name in HAND_WRITTEN:
            why[name] = "written by hand (src/mpi/fortran)"
            continue
        try:
            plan(name, proc, protos[name])
            ok.append((name, proc))
        except Unbound as e:
            why[name] = str(e)
    return ok, why


HEADER_C = """/* f77_wrappers.c -- generated by tools/fortran/gen_fortran.py from the MPI
 * Forum's API description and include/mpi.h: do not edit. The entry points
 * of mpif.h and the mpi module (gfortran's names: lower case, one trailing
 * underscore), each calling the C function (mpi_x_) or its profiling
 * twin (pmpi_x_). The helpers are in src/mpi/fortran/fortran_glue.c. */
#include <stdint.h>
#include <stdlib.h>

#include "attr_language.h"
#include "fortran_glue.h"

"""


def emit_wrappers(ok, protos, path):
    with open(path, "w") as f:
        f.write(HEADER_C)
        for name, proc in ok:
            for suffix in ("", "cptr_") if has_c_pointer_out(proc, True) else ("",):
                f.write(wrapper(name, proc, protos[name], False, suffix))
                f.write(wrapper(name, proc, protos[name], True, suffix))
            if name in large_counts(ok, protos):
                for suffix in ("c_", "c_cptr_") if has_c_pointer_out(proc, True) else ("c_",):
                    f.write(wrapper(name, proc, protos[name + "_c"], False, suffix))
                    f.write(wrapper(name, proc, protos[name + "_c"], True, suffix))
            f.write("\n")


# MPI_Op_create_c's callback is a different procedure type, which no
# generic tells apart from MPI_Op_create's: not in mpi_f08's generic.
NO_LARGE_SPECIFIC = {"MPI_Op_create"}


def large_counts(ok, protos):
    """The bound procedures whose large-count (_c) form mpi_f08 provides:
    those of mpi.h, except where a parameter exists in that form alone."""
    out = set()
    for name, proc in ok:
        if name + "_c" not in protos or name in NO_LARGE_SPECIFIC or \
                not proc.has_embiggenment() or \
                any(q.get("large_only") for q in proc._parseset["parameters"]):
            continue
        try:
            plan(name, proc, protos[name + "_c"])
            out.add(name)
        except Unbound:
            pass
    return out


def has_c_pointer_out(proc, detach=False):
    """Does proc return a C pointer (MPI_Alloc_mem & co.; with detach,
    MPI_Buffer_detach & co. too, whose address only mpi_f08 returns)?"""
    kinds = ("C_BUFFER", "C_BUFFER2") if detach else ("C_BUFFER",)
    return any(q["kind"] in kinds for q in proc._parseset["parameters"])


# Fortran-only procedures of the standard that libmpifort provides
# (fortran_glue.c), beside those of mpi.h.
FORTRAN_ONLY_PROCEDURES = ["MPI_F_sync_reg"]
# Logical constants of Fortran (MPI-4.1 19.1.5): the mpi module and mpif.h
# pass choice buffers by address, copying a non-contiguous section.
LOGICAL_CONSTANTS = [("MPI_SUBARRAYS_SUPPORTED", ".false."),
                     ("MPI_ASYNC_PROTECTS_NONBLOCKING", ".false.")]


def emit_mpi_module(consts_path, ok, procs, path):
    consts = [(n, int(v)) for n, v in (line.split() for line in open(consts_path))]
    consts = [(n, v) for n, v in consts
              if n not in {s[0] for s in SENTINELS} and n not in FUNCTIONS]
    names = [n for n, _ in ok] + sorted(HAND_WRITTEN) + FORTRAN_ONLY_PROCEDURES
    procedures = [(procs[n]._parseset["name"].upper(), procs[n].express.f90,
                   has_c_pointer_out(procs[n])) for n in names if procs[n].express.f90]
    emit_module(path, consts, [(s[0], s[1], s[2]) for s in SENTINELS], PREDEFINED_PROCEDURES,
                procedures, LOGICAL_CONSTANTS)


# mpi_f08's sentinels: their Fortran type (the storage is mpif.h's)
F08_SENTINEL_TYPES = {
    "MPI_BOTTOM": "integer", "MPI_IN_PLACE": "integer",
    "MPI_STATUS_IGNORE": "type(MPI_Status)",
    "MPI_STATUSES_IGNORE": "type(MPI_Status), dimension(1)",
    "MPI_UNWEIGHTED": "integer, dimension(1)", "MPI_WEIGHTS_EMPTY": "integer, dimension(1)",
}
# mpi_f08's predefined callbacks and their abstract interface (the MPI-1
# INTEGER ones have no mpi_f08 form)
F08_PREDEFINED = {
    f"MPI_{obj.upper()}_{fn}": f"MPI_{obj}_{iface}"
    for obj in ("Comm", "Type", "Win")
    for fn, iface in (("DUP_FN", "copy_attr_function"), ("NULL_COPY_FN", "copy_attr_function"),
                      ("NULL_DELETE_FN", "delete_attr_function"))
}
# In mpi_f08, MPI_SUBARRAYS_SUPPORTED: sections become datatypes (fortran_f08.c)
F08_LOGICAL_CONSTANTS = [("MPI_SUBARRAYS_SUPPORTED", ".true."),
                         ("MPI_ASYNC_PROTECTS_NONBLOCKING", ".false.")]


def emit_mpi_f08(consts_path, ok, procs, mpi_h, out):
    consts = [(n, int(v)) for n, v in (line.split() for line in open(consts_path))]
    consts = [(n, v) for n, v in consts
              if n not in {s[0] for s in SENTINELS} and n not in FUNCTIONS]
    names = [n for n, _ in ok] + sorted(HAND_WRITTEN) + FORTRAN_ONLY_PROCEDURES
    procedures = [(procs[n]._parseset["name"], procs[n]) for n in names
                  if procs[n].express.f08 is not None]
    large = large_counts(ok, c_prototypes(mpi_h))
    callbacks = [(c._parseset["name"], c.express.f08) for c in std.CALLBACKS.values()
                 if c.express.f08 is not None]
    sentinels = [(s[0], s[1], F08_SENTINEL_TYPES[s[0]]) for s in SENTINELS]
    f08.emit_types(f"{out}/mpi_f08_types.f90", consts, f08.handle_constants(mpi_h), sentinels,
                   callbacks, sorted(F08_PREDEFINED.items()), F08_LOGICAL_CONSTANTS)
    f08.emit_wrappers(f"{out}/mpi_f08_wrappers.f90", procedures, large)
    f08.emit_module(f"{out}/mpi_f08.f90", procedures, large)


def fortran_line(text):
    """A statement that fits fixed form (columns 7-72) and free form."""
    if len(text) + 6 <= 72:
        return "      " + text + "\n"
    raise SystemExit(f"mpif.h line too long: {text}")


# Integer constants of mpi.h that are not Fortran's (C-only names, or the
# private ones), and the ones Fortran defines differently.
C_ONLY = re.compile(r"^(MPI_F_|PROUST_|MPI_.*_C$)")
FORTRAN_ONLY = {
    "MPI_STATUS_SIZE": "MPI_F_STATUS_SIZE",
    "MPI_SOURCE": "MPI_F_SOURCE + 1", "MPI_TAG": "MPI_F_TAG + 1", "MPI_ERROR": "MPI_F_ERROR + 1",
    "MPI_ADDRESS_KIND": "sizeof(MPI_Aint)", "MPI_OFFSET_KIND": "sizeof(MPI_Offset)",
    "MPI_COUNT_KIND": "sizeof(MPI_Count)", "MPI_INTEGER_KIND": "sizeof(MPI_Fint)",
    # combiners of the Fortran-only MPI-1 constructors (never returned: they
    # are not provided; programs compare with them)
    "MPI_COMBINER_HVECTOR_INTEGER": "1001", "MPI_COMBINER_HINDEXED_INTEGER": "1002",
    "MPI_COMBINER_STRUCT_INTEGER": "1003",
}


def constant_names(mpi_h):
    src = re.sub(r"/\*.*?\*/", " ", open(mpi_h).read(), flags=re.S)
    names = []
    for m in re.finditer(r"^\s*#\s*define\s+(MPI_\w+)\s+(.+)$", src, flags=re.M):
        name = m.group(1)
        if not C_ONLY.match(name) and name not in names:
            names.append(name)
    return names


def emit_constants_program(mpi_h, path):
    names = constant_names(mpi_h)
    with open(path, "w") as f:
        f.write("/* generated by tools/fortran/gen_fortran.py: prints mpi.h's integer\n"
                " * constants for mpif.h (NAME VALUE); others are left out. */\n")
        f.write("#include <stdio.h>\n#include <mpi.h>\n\n")
        f.write("#define INTEGRAL(x) _Generic((x), int: 1, unsigned: 1, long: 1, "
                "unsigned long: 1, long long: 1, unsigned long long: 1, default: 0)\n")
        f.write("#define SHOW(name, x) do { if (INTEGRAL(x)) printf(\"%s %lld\\n\", name, "
                "(long long)_Generic((x), int: (x), unsigned: (x), long: (x), unsigned long: "
                "(x), long long: (x), unsigned long long: (x), default: 0)); } while (0)\n")
        f.write("int main(void)\n{\n")
        for n in names:
            f.write(f"#ifdef {n}\n    SHOW(\"{n}\", {n});\n#endif\n")
        for n, expr in FORTRAN_ONLY.items():
            f.write(f"    printf(\"{n} %lld\\n\", (long long)({expr}));\n")
        f.write("    return 0;\n}\n")


def emit_mpif(consts_path, ok, path):
    consts = []
    for line in open(consts_path):
        name, value = line.split()
        consts.append((name, int(value)))
    have = {n for n, _ in consts}
    with open(path, "w") as f:
        f.write("! mpif.h -- Proust MPI for Fortran (fixed and free form), generated by\n"
                "! tools/fortran/gen_fortran.py from include/mpi.h: do not edit.\n")
        for name, value in consts:
            if name in {s[0] for s in SENTINELS} or name in FUNCTIONS:
                continue
            if value < -2**31 or value >= 2**31 or name in OFFSET_CONSTANTS:
                kind = "INTEGER*8"
            else:
                kind = "INTEGER"
            f.write(fortran_line(f"{kind} {name}"))
            f.write(fortran_line(f"PARAMETER ({name}={value})"))
        for name, value in LOGICAL_CONSTANTS:
            f.write(fortran_line(f"LOGICAL {name}"))
            f.write(fortran_line(f"PARAMETER ({name}={value.upper()})"))
        for fname, block, decl, _, _ in SENTINELS:
            f.write(fortran_line(decl))
            f.write(fortran_line(f"COMMON /{block}/ {fname}"))
        # (MPI_Aint_add and MPI_Aint_diff are left to the program to declare,
        # as with MPICH: programs declare them themselves)
        for name in PREDEFINED_PROCEDURES:
            f.write(fortran_line(f"EXTERNAL {name}"))
        for name, ctype in FUNCTIONS.items():
            if ctype == "double" and any(n == name for n, _ in ok):
                ftype = "DOUBLE PRECISION" if ctype == "double" else "INTEGER*8"
                for n in (name, "P" + name):
                    f.write(fortran_line(f"{ftype} {n.upper()}"))
                    f.write(fortran_line(f"EXTERNAL {n.upper()}"))
    missing = [n for n in ("MPI_STATUS_SIZE", "MPI_COMM_WORLD") if n not in have]
    if missing:
        raise SystemExit(f"constants missing from {consts_path}: {missing}")


def emit_sentinels(path):
    with open(path, "w") as f:
        f.write("/* generated by tools/fortran/gen_fortran.py: the storage of mpif.h's\n"
                " * sentinel COMMON blocks, and their C values. */\n")
        f.write('#include "fortran_glue.h"\n\n')
        for fname, block, _, ints, cval in SENTINELS:
            f.write(f"_Alignas(16) MPI_Fint {block}_[{ints}];\n")
        f.write("\nvoid *pm_f_sentinel_c(const void *p)\n{\n")
        for fname, block, _, _, cval in SENTINELS:
            f.write(f"    if (p == (const void *){block}_)\n        return (void *){cval};\n")
        f.write("    return (void *)p;\n}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["constants", "bindings", "list"])
    ap.add_argument("--mpi-h", required=True)
    ap.add_argument("--consts")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.what == "constants":
        emit_constants_program(a.mpi_h, a.out)
        return
    procs, protos = load_standard(), c_prototypes(a.mpi_h)
    ok, why = bound(procs, protos)
    if a.what == "list":
        print(f"{len(ok)} procedures bound")
        for n, w in sorted(why.items()):
            print(f"  not bound: {n}: {w}")
        return
    emit_wrappers(ok, protos, f"{a.out}/f77_wrappers.c")
    emit_sentinels(f"{a.out}/f77_sentinels.c")
    emit_mpif(a.consts, ok, f"{a.out}/mpif.h")
    emit_mpi_module(a.consts, ok, procs, f"{a.out}/mpi.f90")
    emit_mpi_f08(a.consts, ok, procs, a.mpi_h, a.out)
    print(f"gen_fortran: {len(ok)} procedures bound, {len(why)} not yet", file=sys.stderr)


if __name__ == "__main__":
    main()
