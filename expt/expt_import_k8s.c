/* placeholder */
#include "expt/expt_import_int.h"
int expt__import_istio(imp_ctx *c, json_t *docs, json_t *config) {
  (void)docs; (void)config;
  return imp_fail(c, "$", "Istio is not read yet");
}
