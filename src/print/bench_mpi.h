/* The report of gpurig-mpi bench --mpi (gpu/bench_mpi.h), as text and JSON.
 * Ownership: the JSON is the caller's (json_decref). */
#ifndef GPURIG_PRINT_BENCH_MPI_H
#define GPURIG_PRINT_BENCH_MPI_H

#include <jansson.h>
#include <stdio.h>

#include "gpu/bench_mpi.h"

void gr_print_bench_mpi(FILE *f, const struct gr_mpi_report *rep);
json_t *gr_bench_mpi_to_json(const struct gr_mpi_report *rep);

#endif
