/*
 * model_gateway.c: mapping a callee's final status into the caller's space, as a gateway or a
 * handler does before it replies. Explicit entries first, then the catch-all default, then the
 * canonical tables (grpc-gateway's HTTPStatusFromCode one way, gRPC's
 * http-grpc-status-mapping.md the other way).
 */
#include <stddef.h>

#include "models/model_int.h"

/* gRPC code -> HTTP status, as grpc-gateway's runtime.HTTPStatusFromCode maps them. */
static const int32_t grpc_to_http[RETRY_GRPC_N_CODES] = {
    200, /* OK */
    499, /* CANCELLED (client closed request) */
    500, /* UNKNOWN */
    400, /* INVALID_ARGUMENT */
    504, /* DEADLINE_EXCEEDED */
    404, /* NOT_FOUND */
    409, /* ALREADY_EXISTS */
    403, /* PERMISSION_DENIED */
    429, /* RESOURCE_EXHAUSTED */
    400, /* FAILED_PRECONDITION */
    409, /* ABORTED */
    400, /* OUT_OF_RANGE */
    501, /* UNIMPLEMENTED */
    500, /* INTERNAL */
    503, /* UNAVAILABLE */
    500, /* DATA_LOSS */
    401, /* UNAUTHENTICATED */
};

/* HTTP status -> gRPC code, as gRPC clients map a non-gRPC HTTP response
 * (grpc/grpc doc/http-grpc-status-mapping.md); 2xx is OK here because the gateway answered. */
static int32_t http_to_grpc(int32_t status) {
  if (status >= 200 && status < 300) return RETRY_GRPC_OK;
  switch (status) {
    case 400: return RETRY_GRPC_INTERNAL;
    case 401: return RETRY_GRPC_UNAUTHENTICATED;
    case 403: return RETRY_GRPC_PERMISSION_DENIED;
    case 404: return RETRY_GRPC_UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504: return RETRY_GRPC_UNAVAILABLE;
    default: return RETRY_GRPC_UNKNOWN;
  }
}

/* The order mirrors a real gateway's error handler: its explicit table, then its catch-all
 * for errors, then the library's default translation. */
int32_t model__status_map(const model_status_map *m, retry_space from, retry_space to,
                          int32_t status) {
  if (m != NULL) {
    for (int i = 0; i < m->n; i++)
      if (m->from[i] == status) return m->to[i];
    /* A success passes through unless listed: "default" is the catch-all for failures, the
     * way a gateway's error handler only sees errors. */
    if (m->has_default && !retry_status_is_ok(from, status)) return m->default_to;
  }
  if (from == to) return status;
  if (from == RETRY_SPACE_GRPC) {
    if (status < 0 || status >= RETRY_GRPC_N_CODES) return 500;
    return grpc_to_http[status];
  }
  return http_to_grpc(status);
}
