/* The part of NCCL's C API that RCCL (AMD's port, the same names and
 * values) shares: results, communicators, groups and the rendezvous id.
 * ncclAllReduce is declared by each vendor (nv_api.h, amd/hip_api.h) since
 * its stream is the vendor's type. Declared here so that gpurig builds
 * without either library: they are opened at run time. tests/abi/abi_check.c
 * compiles these against nccl.h.
 *
 * Sources: nccl.h of NCCL 2.28; rccl.h of RCCL 2.18 (ROCm 6) declares the
 * same prototypes and enum values. */
#ifndef GPURIG_CCL_API_H
#define GPURIG_CCL_API_H

typedef unsigned int gr_nccl_result;  /* ncclResult_t */
typedef struct ncclComm *gr_nccl_comm;
enum {
  GR_NCCL_SUCCESS = 0,
  GR_NCCL_FLOAT32 = 7, /* ncclFloat32 */
  GR_NCCL_SUM = 0,     /* ncclSum */
};
typedef gr_nccl_result (*gr_pfn_ncclGetVersion)(int *);
typedef const char *(*gr_pfn_ncclGetErrorString)(gr_nccl_result);
typedef gr_nccl_result (*gr_pfn_ncclCommInitAll)(gr_nccl_comm *, int, const int *);
typedef gr_nccl_result (*gr_pfn_ncclCommDestroy)(gr_nccl_comm);
typedef gr_nccl_result (*gr_pfn_ncclGroupStart)(void);
typedef gr_nccl_result (*gr_pfn_ncclGroupEnd)(void);
/* ncclUniqueId: 128 opaque bytes that rank 0 makes and every rank passes to
 * ncclCommInitRank (gpurig-mpi sends them with MPI_Bcast). */
#define GR_NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[GR_NCCL_UNIQUE_ID_BYTES];
} gr_nccl_unique_id;
typedef gr_nccl_result (*gr_pfn_ncclGetUniqueId)(gr_nccl_unique_id *);
typedef gr_nccl_result (*gr_pfn_ncclCommInitRank)(gr_nccl_comm *, int, gr_nccl_unique_id, int);

#endif
