! f77_fixed.f -- mpif.h in a fixed-form source (columns 7-72), as the
! FORTRAN 77 codes that include it: init, rank, a DOUBLE PRECISION sum,
! a status array, finalize. Prints "f77_fixed: ok" on each rank.
      PROGRAM F77FIX
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROCS, ISTAT(MPI_STATUS_SIZE)
      DOUBLE PRECISION X, S
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      X = DBLE(RANK) + 0.5D0
      CALL MPI_REDUCE(X, S, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0,
     &                MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) THEN
         IF (S .NE. DBLE(NPROCS) * DBLE(NPROCS) / 2.0D0) THEN
            PRINT *, 'f77_fixed: FAILED: sum ', S
            CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
         END IF
         CALL MPI_SEND(S, 1, MPI_DOUBLE_PRECISION, 1, 3,
     &                 MPI_COMM_WORLD, IERR)
      ELSE IF (RANK .EQ. 1) THEN
         CALL MPI_RECV(X, 1, MPI_DOUBLE_PRECISION, 0, MPI_ANY_TAG,
     &                 MPI_COMM_WORLD, ISTAT, IERR)
         IF (ISTAT(MPI_TAG) .NE. 3 .OR. ISTAT(MPI_SOURCE) .NE. 0) THEN
            PRINT *, 'f77_fixed: FAILED: status ', ISTAT
            CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
         END IF
      END IF
      CALL MPI_FINALIZE(IERR)
      PRINT '(A)', 'f77_fixed: ok'
      END
