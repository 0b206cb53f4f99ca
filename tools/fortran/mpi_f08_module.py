"""mpi_f08_module.py -- the `mpi_f08` Fortran module, for gen_fortran.py.

Three generated files:
  mpi_f08_types.f90    module mpi_f08_types: the handle types (BIND(C), one
                       INTEGER: the same storage as mpif.h's handles), the
                       operators on them, TYPE(MPI_Status) (the layout of an
                       mpif.h status), the constants, the sentinels (bound to
                       mpif.h's COMMON storage), the callbacks' abstract
                       interfaces and the predefined callbacks
  mpi_f08_wrappers.f90 one external procedure per specific (MPI_Send_f08ts,
                       MPI_Comm_rank_f08, and PMPI_...), which calls the
                       mpif.h entry point (f77_wrappers.c) through an
                       implicit interface: handles, statuses, logicals and
                       strings have the same storage in both. Choice buffers
                       (TYPE(*), DIMENSION(..)) arrive as descriptors, which
                       fortran_f08.c turns into an address, and a
                       non-contiguous section into a datatype over it
  mpi_f08.f90          module mpi_f08: the generic interfaces (MPI_Send &
                       co.) over those specifics; ierror is optional
"""
import re

from mpi_module import OFFSET_CONSTANTS, SIZEOF_TYPES, split_names, wrap

HANDLE_TYPES = ["MPI_Comm", "MPI_Datatype", "MPI_Errhandler", "MPI_File", "MPI_Group",
                "MPI_Info", "MPI_Message", "MPI_Op", "MPI_Request", "MPI_Session", "MPI_Win"]
# Kinds of the standard's description that say "a count of elements" (the
# count a choice buffer's datatype goes with)
COUNT_KIND = re.compile(r"(XFER|DTYPE)_NUM_ELEM")


def handle_constants(mpi_h):
    """{name: handle type} of mpi.h's handle constants."""
    src = open(mpi_h).read()
    out = {}
    for m in re.finditer(r"^#define (MPI_\w+) +(.*)$", src, flags=re.M):
        name, value = m.group(1), m.group(2).strip()
        c = re.match(r"\(\((MPI_[A-Z][a-z]+)\)", value)
        if c and c.group(1) in HANDLE_TYPES:
            out[name] = c.group(1)
        elif value.startswith("PROUST_MPI_TYPE("):
            out[name] = "MPI_Datatype"
        elif value in out:  # an alias (MPI_INTEGER16 MPI_DATATYPE_NULL)
            out[name] = out[value]
    return out


def rendering(proc, large):
    return proc.express.embiggen.f08 if large else proc.express.f08


def signature(r):
    """The types and ranks of a rendering's arguments, in order, as a generic
    tells specifics apart (MPI_COUNT_KIND and MPI_ADDRESS_KIND are both 8)."""
    header, decls = rendering_lines(r)
    args = [a.strip() for a in re.match(r"^.*?\((.*)\)$", header).group(1).split(",")]
    types = {}
    for d in decls:
        if "::" not in d:
            continue
        spec, names = d.split("::", 1)
        spec = re.sub(r",\s*(INTENT\(\w+\)|OPTIONAL|ASYNCHRONOUS|VALUE)", "", spec).strip()
        spec = spec.replace("MPI_COUNT_KIND", "8").replace("MPI_ADDRESS_KIND", "8")
        spec = spec.replace("MPI_OFFSET_KIND", "8")
        for n in split_names(names):
            types[n.split("(")[0].strip()] = (spec, "(" in n)
    return [types.get(a) for a in args]


def distinct_large(proc):
    """Does the large-count form differ from the other where a generic sees?"""
    return signature(proc.express.f08) != signature(proc.express.embiggen.f08)


def rendering_lines(rendering):
    """(header, [declaration lines]) of an f08 rendering."""
    lines = [line.strip() for line in str(rendering).split("\n") if line.strip()]
    return lines[0], lines[1:]


def declarations(decls):
    """The rendering's declarations, USE lines first (they must come before IMPORT)."""
    uses = [d for d in decls if d.upper().startswith("USE")]
    return uses, [d for d in decls if not d.upper().startswith("USE")]


def specific_name(name, proc, profile, large=False):
    buffers = any(q["kind"] == "BUFFER" for q in proc._parseset["parameters"])
    return (("P" if profile else "") + name + ("_c" if large else "") +
            ("_f08ts" if buffers else "_f08"))


# The collectives whose buffer counts are each rank's share (MPI_Gather's
# recvcount...): only a 1-D section there (fortran_f08.c)
PER_RANK = re.compile(r"^MPI_I?(Neighbor_)?(Gather|Scatter|Allgather|Alltoall)(_init)?$")


def raise_on(decls):
    """The mpif.h routine and handle a refused buffer's error is raised on:
    the call's communicator or window, else MPI_COMM_SELF."""
    for d in decls:
        for t, fn in (("TYPE(MPI_Comm)", "mpi_comm_call_errhandler"),
                      ("TYPE(MPI_Win)", "mpi_win_call_errhandler")):
            if d.startswith(t) and "INTENT(IN)" in d and "::" in d:
                name = split_names(d.split("::", 1)[1])[0]
                if "(" not in name:
                    return fn, name
    return "mpi_comm_call_errhandler", "MPI_COMM_SELF"


def buffer_plan(proc):
    """[(buffer, count, datatype, shared)] of the choice buffers; count and
    datatype are None where the buffer has no (count, datatype) of its own
    (its section must then be contiguous: v and w collectives, windows);
    shared names the buffer before it where the two share the pair
    (sendbuf, recvbuf, count, datatype: reductions). No one pair can describe
    a section of one and a contiguous other, so there recvbuf may be a
    section only when sendbuf is MPI_IN_PLACE."""
    ps = [q for q in proc._parseset["parameters"]
          if "c_parameter" not in (q.get("suppress") or "") and not q.get("large_only")]
    out = []
    for i, q in enumerate(ps):
        if q["kind"] != "BUFFER":
            continue
        nxt = ps[i + 1:i + 3]
        shared = ps[i - 1]["name"] if i > 0 and ps[i - 1]["kind"] == "BUFFER" else None
        if len(nxt) == 2 and COUNT_KIND.search(nxt[0]["kind"]) and \
                nxt[0]["length"] is None and nxt[1]["kind"] == "DATATYPE" and \
                nxt[1]["length"] is None:
            out.append((q["name"], nxt[0]["name"], nxt[1]["name"], shared))
        else:
            out.append((q["name"], None, None, None))
    return out


def wrapper(name, proc, profile, large=False):
    """Fortran source of one external specific (large: its large-count
    form, which calls mpi_x_c_)."""
    header, decls = rendering_lines(rendering(proc, large))
    m = re.match(r"^(.*?)\s*(MPI_\w+)\((.*)\)$", header)
    result_type, args = m.group(1), [a.strip() for a in m.group(3).split(",") if a.strip()]
    spec = specific_name(name, proc, profile, large)
    target = ("p" if profile else "") + name.lower() + ("_c" if large else "")
    helper = "proust_f08_section_c" if large else "proust_f08_section"
    count_type = "integer(kind=MPI_COUNT_KIND)" if large else "integer"
    uses, rest = declarations(decls)
    # choice buffers are TARGETs here (not in the module's interface: the
    # same ABI), so that a contiguous one's address is c_loc's, without a
    # call to C (fortran_f08.c is for sections)
    rest = [re.sub(r"^(TYPE\(\*\), DIMENSION\(\.\.\)[^:]*)::", r"\1, TARGET ::", r)
            for r in rest]
    body = [f"use mpi_f08_types"] + uses + ["implicit none"] + rest
    if result_type:
        body.append(f"{result_type}, external :: {target}")
        return ([f"function {spec}({', '.join(args)}) result(res)"] +
                ["  " + b for b in body] + [f"  {result_type} :: res",
                                            f"  res = {target}({', '.join(args)})",
                                            f"end function {spec}"])
    if "ierror" not in args:  # MPI_F_sync_reg: an opaque call that takes buf
        return ([f"subroutine {spec}({', '.join(args)})"] + ["  " + b for b in body] +
                [f"  call proust_f08_sync_reg({args[0]})", f"end subroutine {spec}"])
    plan = buffer_plan(proc)
    body.append("integer :: ierror_c")
    call_args = []
    pre, post = ["ierror_c = MPI_SUCCESS"], []
    if plan:
        body.insert(1, "use, intrinsic :: iso_c_binding, only : c_intptr_t, c_loc")
    for buf, count, dtype, shared in plan:
        body.append(f"integer(c_intptr_t) :: {buf}_a")
        # (a scalar is contiguous: no call to libgfortran's is_contiguous)
        body.append(f"logical :: {buf}_k")
        contiguous = [f"{buf}_k = rank({buf}) == 0",
                      f"if (.not. {buf}_k) {buf}_k = is_contiguous({buf})",
                      f"if ({buf}_k) then",
                      f"  {buf}_a = transfer(c_loc({buf}), {buf}_a)"]
        if count:
            body.append(f"{count_type} :: {buf}_n")
            body.append(f"integer :: {buf}_t")
            per_rank = 1 if PER_RANK.match(name) else 0
            section = [f"  if (ierror_c == MPI_SUCCESS) call {helper}({buf}, {count}, "
                       f"{dtype}%MPI_VAL, {per_rank}, {buf}_a, {buf}_n, {buf}_t, ierror_c)"]
            if shared:
                section = ([f"  if ({shared}_a == loc(MPI_IN_PLACE)) then"] +
                           ["  " + x for x in section] + ["  else"] +
                           [f"    if (ierror_c == MPI_SUCCESS) call proust_f08_section_address("
                            f"{buf}, {buf}_a, ierror_c)", "  end if"])
            pre += contiguous + [f"  {buf}_n = {count}", f"  {buf}_t = {dtype}%MPI_VAL",
                                 "else", f"  {buf}_t = {dtype}%MPI_VAL"] + section + ["end if"]
            post.append(f"if ({buf}_t /= {dtype}%MPI_VAL) call proust_f08_buffer_done("
                        f"{dtype}%MPI_VAL, {buf}_t)")
        else:
            pre += contiguous + ["else",
                                 f"  if (ierror_c == MPI_SUCCESS) call proust_f08_section_address({buf}, "
                                 f"{buf}_a, ierror_c)",
                                 "end if"]
    by_buffer = {b: (c, d) for b, c, d, _ in plan}
    for a in args:
        if a == "ierror":
            call_args.append("ierror_c")
        elif a in by_buffer:
            call_args.append(f"%val({a}_a)")
        elif any(a == c for c, _ in by_buffer.values() if c):
            buf = next(b for b, (c, _) in by_buffer.items() if c == a)
            call_args.append(f"{buf}_n")
        elif any(a == d for _, d in by_buffer.values() if d):
            buf = next(b for b, (_, d) in by_buffer.items() if d == a)
            call_args.append(f"{buf}_t")
        else:
            call_args.append(a)
    if any(q["kind"] == "C_BUFFER2" for q in proc._parseset["parameters"]):
        target += "_cptr"  # (MPI_Buffer_detach's address: returned there)
    call = f"call {target}({', '.join(call_args)})"
    if plan:
        fn, handle = raise_on(rest)
        body.append("integer :: ierror_raise")
        pre.append(f"if (ierror_c /= MPI_SUCCESS) call {fn}({handle}, ierror_c, ierror_raise)")
        call = f"if (ierror_c == MPI_SUCCESS) {call}"
    lines = [f"subroutine {spec}({', '.join(args)})"] + ["  " + b for b in body]
    lines += ["  " + p for p in (pre if plan else [])] + ["  " + call] + ["  " + p for p in post]
    lines += ["  if (present(ierror)) ierror = ierror_c", f"end subroutine {spec}"]
    return lines


def interface_body(name, proc, profile, large=False):
    header, decls = rendering_lines(rendering(proc, large))
    m = re.match(r"^(.*?)\s*(MPI_\w+)\((.*)\)$", header)
    result_type, args = m.group(1), m.group(3)
    spec = specific_name(name, proc, profile, large)
    uses, rest = declarations(decls)
    kind = "function" if result_type else "subroutine"
    head = f"{kind} {spec}({args})" + (" result(res)" if result_type else "")
    out = [head] + ["  " + u for u in uses] + ["  import", "  implicit none"]
    out += ["  " + r for r in rest]
    if result_type:
        out.append(f"  {result_type} :: res")
    out.append(f"end {kind} {spec}")
    return out


def emit_types(path, consts, handles, sentinels, callbacks, predefined, logical_consts):
    w = ["! mpi_f08_types.f90 -- generated by tools/fortran/gen_fortran.py: do not edit.",
         "module mpi_f08_types",
         "  use, intrinsic :: iso_c_binding, only : c_int, c_intptr_t",
         "  implicit none",
         "  private :: c_int, c_intptr_t"]
    for name, value in consts:
        if name in handles:
            continue
        wide = value < -2**31 or value >= 2**31 or name in OFFSET_CONSTANTS
        kind = "integer(kind=8)" if wide else "integer"
        w.append(f"  {kind}, parameter :: {name} = {value}")
    for name, value in logical_consts:
        w.append(f"  logical, parameter :: {name} = {value}")
    for t in HANDLE_TYPES:
        w += [f"  type, bind(C) :: {t}", "    integer :: MPI_VAL", f"  end type {t}"]
    w += ["  type, bind(C) :: MPI_Status",
          "    integer :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
          "    integer :: proust_private(MPI_STATUS_SIZE - 3)",
          "  end type MPI_Status"]
    values = dict(consts)
    for name, t in sorted(handles.items()):
        if name in values:
            w.append(f"  type({t}), parameter :: {name} = {t}({values[name]})")
    # the sentinels: mpif.h's COMMON blocks (their storage: f77_sentinels.c)
    for name, common, ftype in sentinels:
        w.append(f"  {ftype} :: {name}")
        w.append(f"  common /{common}/ {name}")
    # operators on handles
    ops = []
    for t in HANDLE_TYPES:
        short = t[4:].lower()
        ops.append((f"proust_{short}_eq", f"proust_{short}_ne", t))
    w.append("  interface operator(==)")
    w.append("    module procedure " + ", ".join(e for e, _, _ in ops))
    w.append("  end interface")
    w.append("  interface operator(/=)")
    w.append("    module procedure " + ", ".join(n for _, n, _ in ops))
    w.append("  end interface")
    for cb_name, rendering in callbacks:
        header, decls = rendering_lines(rendering)
        sig = decls[0]
        uses, rest = declarations(decls[1:])
        w += ["  abstract interface", f"    subroutine {sig}"]
        w += ["      " + u for u in uses] + ["      import", "      implicit none"]
        w += ["      " + r for r in rest]
        w += [f"    end subroutine {sig.split('(')[0]}", "  end interface"]
    for fn_name, iface in predefined:
        w.append(f"  procedure({iface}) :: {fn_name}")
    # choice buffers (fortran_f08.c)
    w += ["  interface",
          "    subroutine proust_f08_buffer(buf, count, datatype, per_rank, addr, newcount, &",
          "        newtype, ierror) bind(C, name=\"proust_f08_buffer\")",
          "      import",
          "      type(*), dimension(..), intent(in) :: buf",
          "      integer(c_int), intent(in) :: count, datatype, per_rank",
          "      integer(c_intptr_t), intent(out) :: addr",
          "      integer(c_int), intent(out) :: newcount, newtype, ierror",
          "    end subroutine proust_f08_buffer",
          "    subroutine proust_f08_buffer_c(buf, count, datatype, per_rank, addr, newcount, &",
          "        newtype, ierror) bind(C, name=\"proust_f08_buffer_c\")",
          "      import",
          "      type(*), dimension(..), intent(in) :: buf",
          "      integer(kind=MPI_COUNT_KIND), intent(in) :: count",
          "      integer(c_int), intent(in) :: datatype, per_rank",
          "      integer(c_intptr_t), intent(out) :: addr",
          "      integer(kind=MPI_COUNT_KIND), intent(out) :: newcount",
          "      integer(c_int), intent(out) :: newtype, ierror",
          "    end subroutine proust_f08_buffer_c",
          "    subroutine proust_f08_buffer_done(datatype, newtype) &",
          "        bind(C, name=\"proust_f08_buffer_done\")",
          "      import",
          "      integer(c_int), intent(in) :: datatype, newtype",
          "    end subroutine proust_f08_buffer_done",
          "    subroutine proust_f08_address(buf, addr, ierror) bind(C, name=\"proust_f08_address\")",
          "      import",
          "      type(*), dimension(..), intent(in) :: buf",
          "      integer(c_intptr_t), intent(out) :: addr",
          "      integer(c_int), intent(out) :: ierror",
          "    end subroutine proust_f08_address",
          "    subroutine proust_f08_sync_reg(buf) bind(C, name=\"proust_f08_sync_reg\")",
          "      type(*), dimension(..) :: buf",
          "    end subroutine proust_f08_sync_reg",
          "  end interface"]
    w.append("contains")
    # The specifics' way to fortran_f08.c for what is not contiguous: out of
    # line, so that their own fast path has no CFI descriptor to set up
    w += ["  subroutine proust_f08_section(buf, count, datatype, per_rank, addr, newcount, &",
          "      newtype, ierror)",
          "    type(*), dimension(..), intent(in) :: buf",
          "    integer(c_int), intent(in) :: count, datatype, per_rank",
          "    integer(c_intptr_t), intent(out) :: addr",
          "    integer(c_int), intent(out) :: newcount, newtype, ierror",
          "    call proust_f08_buffer(buf, count, datatype, per_rank, addr, newcount, newtype, &",
          "                           ierror)",
          "  end subroutine proust_f08_section",
          "  subroutine proust_f08_section_c(buf, count, datatype, per_rank, addr, newcount, &",
          "      newtype, ierror)",
          "    type(*), dimension(..), intent(in) :: buf",
          "    integer(kind=MPI_COUNT_KIND), intent(in) :: count",
          "    integer(c_int), intent(in) :: datatype, per_rank",
          "    integer(c_intptr_t), intent(out) :: addr",
          "    integer(kind=MPI_COUNT_KIND), intent(out) :: newcount",
          "    integer(c_int), intent(out) :: newtype, ierror",
          "    call proust_f08_buffer_c(buf, count, datatype, per_rank, addr, newcount, newtype, &",
          "                             ierror)",
          "  end subroutine proust_f08_section_c",
          "  subroutine proust_f08_section_address(buf, addr, ierror)",
          "    type(*), dimension(..), intent(in) :: buf",
          "    integer(c_intptr_t), intent(out) :: addr",
          "    integer(c_int), intent(out) :: ierror",
          "    call proust_f08_address(buf, addr, ierror)",
          "  end subroutine proust_f08_section_address"]
    for eq, ne, t in ops:
        for fn, op in ((eq, "=="), (ne, "/=")):
            w += [f"  elemental logical function {fn}(a, b)",
                  f"    type({t}), intent(in) :: a, b",
                  f"    {fn} = a%MPI_VAL {op} b%MPI_VAL",
                  f"  end function {fn}"]
    w.append("end module mpi_f08_types")
    write(path, w)


def emit_wrappers(path, procedures, large):
    large = {n for n, p in procedures if n in large and distinct_large(p)}
    w = ["! mpi_f08_wrappers.f90 -- generated by tools/fortran/gen_fortran.py: do not edit.",
         "! The specific procedures of mpi_f08, each calling mpif.h's entry point."]
    for name, proc in procedures:
        for profile in (False, True):
            w += wrapper(name, proc, profile)
            w.append("")
            if name in large:
                w += wrapper(name, proc, profile, True)
                w.append("")
    write(path, w)


def emit_module(path, procedures, large):
    large = {n for n, p in procedures if n in large and distinct_large(p)}
    w = ["! mpi_f08.f90 -- Proust MPI's `mpi_f08` module, generated by",
         "! tools/fortran/gen_fortran.py from the MPI Forum's API description: do not edit.",
         "module mpi_f08",
         "  use mpi_f08_types",
         "  implicit none"]
    for name, proc in procedures:
        for profile in (False, True):
            w.append(f"  interface {('P' if profile else '') + name}")
            w += ["    " + b for b in interface_body(name, proc, profile)]
            if name in large:
                w += ["    " + b for b in interface_body(name, proc, profile, True)]
            w.append("  end interface")
    w.append("  interface MPI_SIZEOF")
    w.append("    module procedure " + ", ".join(f"proust_f08_sizeof_{s}" for s, _ in SIZEOF_TYPES))
    w.append("  end interface MPI_SIZEOF")
    w.append("contains")
    for suffix, spec in SIZEOF_TYPES:
        w += [f"  subroutine proust_f08_sizeof_{suffix}(x, size, ierror)",
              "    use, intrinsic :: iso_fortran_env",
              f"    {spec}, dimension(..), intent(in) :: x",
              "    integer, intent(out) :: size",
              "    integer, optional, intent(out) :: ierror",
              "    size = int(storage_size(x) / 8)",
              "    if (present(ierror)) ierror = MPI_SUCCESS",
              f"  end subroutine proust_f08_sizeof_{suffix}"]
    w.append("end module mpi_f08")
    write(path, w)


def write(path, lines):
    with open(path, "w") as f:
        for line in lines:
            f.write(wrap(line))
