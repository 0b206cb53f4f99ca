# Distributed graph topologies and the neighbourhood collectives
# (MPI_Dist_graph_*, MPI_(I)neighbor_*): tests/mpi/dist_graph.c and
# neighbor_coll.c, jobs named mpi_<program>_<ranks>_<rail>. Each job takes
# well under a second here; MPICH 4.0.2 took up to about 5 s for
# neighbor_coll on 8 ranks.

# Jobs through comm_jobs (comm.cmake, included first: tests/mpi.cmake
# includes the families in sorted order, and neighbor.cmake sorts after it).
mpi_test_program(mpi_dist_graph ${MPI_TEST_DIR}/dist_graph.c)
mpi_test_program(mpi_neighbor_coll ${MPI_TEST_DIR}/neighbor_coll.c)

comm_jobs(dist_graph 1 2 3 5 8)
comm_jobs(neighbor_coll 1 2 3 4 6)
