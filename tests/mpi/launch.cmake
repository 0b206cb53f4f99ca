# Proust MPI programs started by other launchers (issue 39): MPICH's Hydra
# (mpiexec.mpich, from Debian's `mpich`, which make test installs) speaks
# PMI-1 to them, over an inherited socket (PMI_FD) or a port (-pmi-port).
# Skipped (77) where Hydra is missing. Jobs: mpi_launch_<launcher>_<what>.
set(HYDRA_OR_SKIP "command -v mpiexec.mpich >/dev/null || { echo 'mpiexec.mpich not installed'; exit 77; }")

function(hydra_job name)
  add_test(NAME mpi_launch_hydra_${name} COMMAND sh -c "${HYDRA_OR_SKIP}; ${ARGN}")
  set_tests_properties(mpi_launch_hydra_${name} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                       LABELS launch)
endfunction()

# every message checked, over the rails Proust picks under Hydra
hydra_job(stress_fd
  "exec bash ${MPI_TEST_DIR}/stress_run.sh mpiexec.mpich 3 90 $<TARGET_FILE:mpi_stress_traffic> -t 2 -r 30")
hydra_job(stress_port
  "exec mpiexec.mpich -pmi-port -n 4 $<TARGET_FILE:mpi_stress_traffic> -t 2 -r 20 -s 7")
hydra_job(tcp
  "PROUST_RAILS=self,tcp exec mpiexec.mpich -n 3 $<TARGET_FILE:mpi_stress_traffic> -t 1 -r 20 -s 3")
hydra_job(idle_pull "exec mpiexec.mpich -n 3 $<TARGET_FILE:mpi_p2p_idle_pull>")
# MPI_Abort(7) on one rank: Hydra stops the job with that code
hydra_job(abort
  "mpiexec.mpich -n 4 $<TARGET_FILE:mpi_p2p_abort>; rc=$?; [ $rc -eq 7 ] || { echo \"exit status $rc, not 7\"; exit 1; }")

# Open MPI's mpirun (Debian's openmpi-bin, which make test installs) runs a
# PMIx server: Proust programs take their rank, job and host-mates from it.
set(OMPI_OR_SKIP "command -v mpirun.openmpi >/dev/null || { echo 'mpirun.openmpi not installed'; exit 77; }")
set(OMPI_RUN "mpirun.openmpi --allow-run-as-root --oversubscribe")

function(ompi_job name)
  add_test(NAME mpi_launch_ompi_${name} COMMAND sh -c "${OMPI_OR_SKIP}; ${ARGN}")
  set_tests_properties(mpi_launch_ompi_${name} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                       LABELS launch)
endfunction()

ompi_job(stress
  "exec bash ${MPI_TEST_DIR}/stress_run.sh \"${OMPI_RUN}\" 3 90 $<TARGET_FILE:mpi_stress_traffic> -t 2 -r 30")
ompi_job(where "exec ${OMPI_RUN} -n 4 $<TARGET_FILE:mpi_cluster_where> 1")
ompi_job(idle_pull "exec ${OMPI_RUN} -n 3 $<TARGET_FILE:mpi_p2p_idle_pull>")
ompi_job(abort
  "${OMPI_RUN} -n 4 $<TARGET_FILE:mpi_p2p_abort>; rc=$?; [ $rc -eq 7 ] || { echo \"exit status $rc, not 7\"; exit 1; }")
