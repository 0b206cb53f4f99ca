# Proust MPI programs started by other launchers on this host (issue 39):
# MPICH's Hydra (mpiexec.mpich, Debian's `mpich`) speaks PMI-1 to them, over
# an inherited socket (PMI_FD) or a port (-pmi-port); Open MPI's mpirun
# (Debian's `openmpi-bin`) serves PMIx. make test installs both (without
# their headers). Jobs: mpi_launch_<launcher>_<what>, label "launch".

# launch_job(launcher-program name shell-command): mpi_launch_<name>,
# skipped (77) where the launcher is not installed
function(launch_job program name)
  add_test(NAME mpi_launch_${name}
           COMMAND sh -c "command -v ${program} >/dev/null || { echo '${program} not installed'; exit 77; }; ${ARGN}")
  set_tests_properties(mpi_launch_${name} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77 LABELS launch)
endfunction()
function(hydra_job name)
  launch_job(mpiexec.mpich hydra_${name} ${ARGN})
endfunction()
function(ompi_job name)
  launch_job(mpirun.openmpi ompi_${name} ${ARGN})
endfunction()

# every message checked, over the rails Proust picks under Hydra
hydra_job(stress_fd
  "exec bash ${MPI_TEST_DIR}/stress_run.sh mpiexec.mpich 3 90 $<TARGET_FILE:mpi_stress_traffic> -t 2 -r 30")
hydra_job(stress_port
  "exec mpiexec.mpich -pmi-port -n 4 $<TARGET_FILE:mpi_stress_traffic> -t 2 -r 20 -s 7")
hydra_job(tcp
  "PROUST_RAILS=self,tcp exec mpiexec.mpich -n 3 $<TARGET_FILE:mpi_stress_traffic> -t 1 -r 20 -s 3")
hydra_job(idle_pull "exec mpiexec.mpich -n 3 $<TARGET_FILE:mpi_p2p_idle_pull>")
# PMI-2's messages with Hydra (whose kvs-fence is not a barrier: pmi1.c
# adds one), every message checked
hydra_job(pmi2_stress
  "PROUST_BOOT=pmi2 exec bash ${MPI_TEST_DIR}/stress_run.sh mpiexec.mpich 4 90 $<TARGET_FILE:mpi_stress_traffic> -t 2 -r 20")
hydra_job(pmi2_where "PROUST_BOOT=pmi2 exec mpiexec.mpich -n 3 $<TARGET_FILE:mpi_cluster_where> 1")
# MPI_Abort(7) on one rank: Hydra stops the job with that code
hydra_job(abort
  "mpiexec.mpich -n 4 $<TARGET_FILE:mpi_p2p_abort>; rc=$?; [ $rc -eq 7 ] || { echo \"exit status $rc, not 7\"; exit 1; }")

# Open MPI's mpirun (Debian's openmpi-bin, which make test installs) runs a
# PMIx server: Proust programs take their rank, job and host-mates from it.
set(OMPI_RUN "mpirun.openmpi --allow-run-as-root --oversubscribe")

ompi_job(stress
  "exec bash ${MPI_TEST_DIR}/stress_run.sh \"${OMPI_RUN}\" 3 90 $<TARGET_FILE:mpi_stress_traffic> -t 2 -r 30")
ompi_job(where "exec ${OMPI_RUN} -n 4 $<TARGET_FILE:mpi_cluster_where> 1")
ompi_job(idle_pull "exec ${OMPI_RUN} -n 3 $<TARGET_FILE:mpi_p2p_idle_pull>")
ompi_job(abort
  "${OMPI_RUN} -n 4 $<TARGET_FILE:mpi_p2p_abort>; rc=$?; [ $rc -eq 7 ] || { echo \"exit status $rc, not 7\"; exit 1; }")
