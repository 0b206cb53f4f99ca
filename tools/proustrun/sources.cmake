# Sources of the proustrun launcher, relative to tools/. It links only
# Threads and hwloc (--bind-to) and must not depend on libproust (it shares
# src/boot/wire.h).
set(PROUSTRUN_SOURCES
  proustrun/main.c
  proustrun/args.c
  proustrun/spawn.c
  proustrun/kvs.c
  proustrun/iofwd.c
  proustrun/loop.c
  proustrun/bind.c
  proustrun/hosts.c
  proustrun/frontend.c
  proustrun/agent.c
  proustrun/setup_msg.c
)
