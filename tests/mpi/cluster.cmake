# Proust across hosts (issue 39): a cluster of network namespaces on this
# machine (scripts/testcluster.sh: hosts h1..hN, built and removed by each
# test, also when it fails), started by proustrun (one agent per host),
# MPICH's Hydra (PMI-1) or Open MPI's mpirun (PMIx) through the cluster's
# launch agent. Needs root, iproute2
# and the launcher (else skipped: 77). The tests
# share the one cluster name, so they never run at once (RESOURCE_LOCK).
# Jobs: mpi_cluster_<launcher>_<what>, label "cluster".
mpi_test_program(mpi_cluster_where ${MPI_TEST_DIR}/cluster_where.c)
mpi_test_program(mpi_cluster_fail ${MPI_TEST_DIR}/cluster_fail.c)
set(TESTCLUSTER ${PROJECT_SOURCE_DIR}/scripts/testcluster.sh)
set(HYDRA_ON_CLUSTER
    "mpiexec.mpich -launcher ssh -launcher-exec $TESTCLUSTER_AGENT -hosts $TESTCLUSTER_HOSTS -localhost $TESTCLUSTER_HEAD")

# cluster_job(NAME n HOSTS h COMMAND shell-command)
function(cluster_job)
  cmake_parse_arguments(C "" "NAME;HOSTS" "COMMAND" ${ARGN})
  string(REGEX MATCH "^[a-z]+" launcher ${C_NAME})
  set(need mpiexec.mpich)
  if(launcher STREQUAL "ompi")
    set(need mpirun.openmpi)
  elseif(launcher STREQUAL "proustrun")
    set(need sh)
  elseif(launcher STREQUAL "slurm")
    set(need slurmd)
  endif()
  add_test(NAME mpi_cluster_${C_NAME}
           COMMAND bash ${TESTCLUSTER} run ${C_HOSTS} sh -c
                   "command -v ${need} >/dev/null || { echo 'no ${need}'; exit 77; }; ${C_COMMAND}")
  set_tests_properties(mpi_cluster_${C_NAME} PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77
                       LABELS cluster RESOURCE_LOCK testcluster
                       ENVIRONMENT "HYDRA_LAUNCHER_AUTOFORK=0")
endfunction()

# which ranks share a host, processor names, and data between every pair
cluster_job(NAME hydra_where HOSTS 2
  COMMAND "${HYDRA_ON_CLUSTER} -n 4 $<TARGET_FILE:mpi_cluster_where> 2")
cluster_job(NAME hydra_where_block HOSTS 3
  COMMAND "${HYDRA_ON_CLUSTER} -ppn 2 -n 5 $<TARGET_FILE:mpi_cluster_where> 3")
# the stress family's traffic across hosts (tcp between them, shm inside)
cluster_job(NAME hydra_stress HOSTS 2
  COMMAND "exec bash ${MPI_TEST_DIR}/stress_run.sh \"${HYDRA_ON_CLUSTER}\" 4 120 $<TARGET_FILE:mpi_stress_traffic> -t 2 -r 30")
cluster_job(NAME hydra_stress_buffered HOSTS 2
  COMMAND "exec bash ${MPI_TEST_DIR}/stress_run.sh \"${HYDRA_ON_CLUSTER}\" 4 120 $<TARGET_FILE:mpi_stress_traffic> -t 1 -r 60 -m 262147 -p buffered")

# Open MPI's mpirun: its daemons reach it over the cluster's network only
set(OMPI_ON_CLUSTER
    "mpirun.openmpi --allow-run-as-root --oversubscribe --mca plm_rsh_agent $TESTCLUSTER_AGENT --mca oob_tcp_if_include 198.18.77.0/24 -H $TESTCLUSTER_HOSTS")
cluster_job(NAME ompi_where HOSTS 2
  COMMAND "${OMPI_ON_CLUSTER} -n 4 $<TARGET_FILE:mpi_cluster_where> 2")
cluster_job(NAME ompi_stress HOSTS 2
  COMMAND "exec bash ${MPI_TEST_DIR}/stress_run.sh \"${OMPI_ON_CLUSTER}\" 4 120 $<TARGET_FILE:mpi_stress_traffic> -t 2 -r 30")

# hosts that publish no address the other can reach: MPI_Init fails with a
# message naming the rank, its host and what it published, and the job ends
cluster_job(NAME hydra_no_route HOSTS 2
  COMMAND "out=$(PROUST_TCP_IF_EXCLUDE=eth0 timeout 60 ${HYDRA_ON_CLUSTER} -n 2 $<TARGET_FILE:mpi_cluster_where> 2 2>&1); rc=$?; echo \"$out\" | tail -5; [ $rc -ne 0 ] && [ $rc -ne 124 ] && echo \"$out\" | grep -q 'no address another host can reach'")

# proustrun across hosts: -H / --hostfile / --map-by / --npernode, one agent
# per host started through the launch agent
set(PROUSTRUN_ON_CLUSTER "$<TARGET_FILE:proustrun> --launch-agent $TESTCLUSTER_AGENT")
cluster_job(NAME proustrun_where HOSTS 2
  COMMAND "${PROUSTRUN_ON_CLUSTER} -H h1:2,h2:2 $<TARGET_FILE:mpi_cluster_where> 2")
cluster_job(NAME proustrun_where_map_node HOSTS 3
  COMMAND "printf 'h1 slots=2\\nh2:2 # two\\n\\nh3\\n' > hosts.$$ && ${PROUSTRUN_ON_CLUSTER} --hostfile hosts.$$ --map-by node -n 5 $<TARGET_FILE:mpi_cluster_where> 3; rc=$?; rm -f hosts.$$; exit $rc")
cluster_job(NAME proustrun_where_npernode HOSTS 3
  COMMAND "${PROUSTRUN_ON_CLUSTER} -H h1,h2,h3 --npernode 2 --tag-output $<TARGET_FILE:mpi_cluster_where> 3 | grep -x '\\[0\\] cluster_where: 6 ranks on 3 hosts, placement and data right'")
cluster_job(NAME proustrun_stress HOSTS 2
  COMMAND "exec bash ${MPI_TEST_DIR}/stress_run.sh \"${PROUSTRUN_ON_CLUSTER} -H h1:2,h2:2\" 4 120 $<TARGET_FILE:mpi_stress_traffic> -t 2 -r 30")
# exit codes and failures: the first failing rank's code (rank 0, a second
# before rank 1), a rank killed on h2 (the survivor
# gets an error at once, the job ends with 137), a stranger on the port,
# h2's link down mid-transfer, the front end killed, a host without the program
cluster_job(NAME proustrun_exit_code HOSTS 2
  COMMAND "${PROUSTRUN_ON_CLUSTER} -H h1,h2 sh -c 'sleep $((PROUST_RANK * 1)); exit $((3 + PROUST_RANK))'; [ $? -eq 3 ]")
cluster_job(NAME proustrun_fail_kill HOSTS 2
  COMMAND "out=$(${PROUSTRUN_ON_CLUSTER} --grace 5 -H h1,h2 $<TARGET_FILE:mpi_cluster_fail> kill 2>&1); rc=$?; echo \"$out\"; [ $rc -eq 137 ] && echo \"$out\" | grep -q 'survivor: error class' && echo \"$out\" | grep -q 'rank 1 (pid [0-9]* on h2) killed by signal 9'")
# the ofi rail (libfabric, tcp;ofi_rxm here) between the hosts, shm inside
cluster_job(NAME proustrun_ofi_where HOSTS 2
  COMMAND "PROUST_RAILS=self,shm,ofi ${PROUSTRUN_ON_CLUSTER} -H h1:2,h2:2 $<TARGET_FILE:mpi_cluster_where> 2")
cluster_job(NAME proustrun_ofi_stress HOSTS 2
  COMMAND "PROUST_RAILS=self,shm,ofi exec bash ${MPI_TEST_DIR}/stress_run.sh \"${PROUSTRUN_ON_CLUSTER} -H h1:2,h2:2\" 4 120 $<TARGET_FILE:mpi_stress_traffic> -t 2 -r 30")
set_tests_properties(mpi_cluster_proustrun_ofi_where mpi_cluster_proustrun_ofi_stress
                     PROPERTIES LABELS "cluster;ofi")
# one-sided across hosts: puts and gets as remote writes and reads (rma_data
# checks they were), slot rings on; and the synchronisation family with
# two ranks per host (shm inside a host, the NIC's transfers between)
cluster_job(NAME proustrun_ofi_rma HOSTS 2
  COMMAND "PROUST_RAILS=self,shm,ofi PROUST_RMA_NIC=on PROUST_OFI_RING=on ${PROUSTRUN_ON_CLUSTER} -H h1,h2 $<TARGET_FILE:mpi_rma_data> --expect-nic")
cluster_job(NAME proustrun_ofi_rma_sync HOSTS 2
  COMMAND "PROUST_RAILS=self,shm,ofi PROUST_RMA_NIC=on PROUST_OFI_RING=on ${PROUSTRUN_ON_CLUSTER} -H h1:2,h2:2 $<TARGET_FILE:mpi_rma_sync> --expect-nic")
# accumulates with two ranks per host: every one, to a rank on the same host
# or itself too, by the NIC's atomics (rma_acc checks they were): shm
# carries the messages inside a host, ofi all the atomics
cluster_job(NAME proustrun_ofi_rma_acc HOSTS 2
  COMMAND "PROUST_RAILS=self,shm,ofi PROUST_RMA_NIC=on ${PROUSTRUN_ON_CLUSTER} -H h1:2,h2:2 $<TARGET_FILE:mpi_rma_acc> --expect-nic")
set_tests_properties(mpi_cluster_proustrun_ofi_rma mpi_cluster_proustrun_ofi_rma_sync
                     mpi_cluster_proustrun_ofi_rma_acc PROPERTIES LABELS "cluster;ofi")
# a rank killed on one host: the survivor gets an error, the job ends with 137
cluster_job(NAME proustrun_ofi_fail_kill HOSTS 2
  COMMAND "out=$(PROUST_RAILS=self,shm,ofi ${PROUSTRUN_ON_CLUSTER} --grace 5 -H h1,h2 $<TARGET_FILE:mpi_cluster_fail> kill 2>&1); rc=$?; echo \"$out\"; [ $rc -eq 137 ] && echo \"$out\" | grep -q 'survivor: error class'")
set_tests_properties(mpi_cluster_proustrun_ofi_fail_kill PROPERTIES LABELS "cluster;ofi")
# h2's link down in the middle of 64 MiB exchanges over ofi: an error, not a hang
cluster_job(NAME proustrun_ofi_link HOSTS 2
  COMMAND "PROUST_RAILS=self,shm,ofi exec bash ${MPI_TEST_DIR}/cluster_proustrun.sh link $<TARGET_FILE:proustrun> $<TARGET_FILE:mpi_cluster_fail>")
set_tests_properties(mpi_cluster_proustrun_ofi_link PROPERTIES LABELS "cluster;ofi")
foreach(case stranger link orphans missing)
  set(prog mpi_cluster_where)
  if(case STREQUAL "link" OR case STREQUAL "orphans")
    set(prog mpi_cluster_fail)
  endif()
  cluster_job(NAME proustrun_${case} HOSTS 2
    COMMAND "exec bash ${MPI_TEST_DIR}/cluster_proustrun.sh ${case} $<TARGET_FILE:proustrun> $<TARGET_FILE:${prog}>")
endforeach()

# a real Slurm on the test hosts (scripts/testcluster-slurm.sh: slurmctld
# here, one slurmd per host, no munge): srun --mpi=pmix (PMIx), srun
# --mpi=pmi2 (its PMI-1 mode), and proustrun inside salloc (the
# allocation's nodes, agents started with srun)
set(SLURM_ON_CLUSTER "exec bash ${PROJECT_SOURCE_DIR}/scripts/testcluster-slurm.sh sh -c")
cluster_job(NAME slurm_pmix_where HOSTS 2
  COMMAND "${SLURM_ON_CLUSTER} \"srun --mpi=pmix -N 2 -n 4 $<TARGET_FILE:mpi_cluster_where> 2\"")
cluster_job(NAME slurm_pmi2_where HOSTS 2
  COMMAND "${SLURM_ON_CLUSTER} \"srun --mpi=pmi2 -N 2 -n 4 $<TARGET_FILE:mpi_cluster_where> 2\"")
cluster_job(NAME slurm_pmi2_own_where HOSTS 2
  COMMAND "${SLURM_ON_CLUSTER} \"PROUST_BOOT=pmi2 srun --mpi=pmi2 -N 2 -n 4 $<TARGET_FILE:mpi_cluster_where> 2\"")
cluster_job(NAME slurm_salloc_proustrun HOSTS 2
  COMMAND "${SLURM_ON_CLUSTER} \"salloc -N 2 -n 4 $<TARGET_FILE:proustrun> --tag-output $<TARGET_FILE:mpi_cluster_where> 2 | grep -x '.0. cluster_where: 4 ranks on 2 hosts, placement and data right'\"")
# a rank on h2 that ends with an error under srun --mpi=pmix (which would
# end the step at once on a signal): the survivor on h1 gets an error at
# once, srun reports the failure
cluster_job(NAME slurm_pmix_fail_exit HOSTS 2
  COMMAND "${SLURM_ON_CLUSTER} \"srun --kill-on-bad-exit=0 --mpi=pmix -N 2 -n 2 $<TARGET_FILE:mpi_cluster_fail> exit > out.$$ 2>&1; rc=\\$?; cat out.$$; grep -q survivor out.$$; ok=\\$?; rm -f out.$$; [ \\$rc -ne 0 ] && [ \\$ok -eq 0 ]\"")

# MPI-IO across hosts (issue 44): one aggregator per host in two-phase I/O,
# the shared file pointer in a locked file beside the data (not a shared-
# memory window), every byte checked by every rank
if(PROUST_MPI_IO)
  cluster_job(NAME hydra_io_coll HOSTS 2
    COMMAND "${HYDRA_ON_CLUSTER} -n 4 $<TARGET_FILE:io_coll>")
  cluster_job(NAME hydra_io_shared HOSTS 2
    COMMAND "${HYDRA_ON_CLUSTER} -n 4 $<TARGET_FILE:io_shared>")
  cluster_job(NAME hydra_io_nonblocking HOSTS 2
    COMMAND "${HYDRA_ON_CLUSTER} -n 4 $<TARGET_FILE:io_nonblocking>")
endif()
