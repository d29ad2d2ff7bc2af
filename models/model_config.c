/*
 * model_config.c: freeing a model_config. The structs are filled by the scenario loader
 * (expt/expt_scenario_parse.c); everything they point to is owned: names, method lists, calls
 * with their policies, faults with their strings.
 *
 * Destroy must accept a config the loader abandoned half-way (after an error), so it relies
 * only on what the loader guarantees at every step: arrays are zeroed when allocated, and a
 * count covers exactly the elements whose pointers may be set.
 */
#include "models/model_config.h"
#include "models/model_ops.h"

#include <stdlib.h>

static void destroy_client(model_client_cfg *cl) {
  free(cl->name);
  for (size_t i = 0; i < cl->n_methods; i++)
    free(cl->methods[i].name);
  free(cl->methods);
  retry_config_destroy(cl->policy);
  if (cl->on_failure != NULL && cl->on_failure->fallback != NULL) {
    model_call_cfg *fb = cl->on_failure->fallback;
    free(fb->method);
    for (size_t m = 0; m < fb->n_when_method; m++) /* read before the loader refuses it */
      free(fb->when_method[m]);
    free(fb->when_method);
    retry_config_destroy(fb->policy);
    free(fb);
  }
  free(cl->on_failure);
}

static void destroy_service(model_service_cfg *svc) {
  free(svc->name);
  free(svc->reject_pushback);
  free(svc->reject_retry_after);
  for (int i = 0; i < svc->criticality.n_methods; i++)
    free(svc->criticality.methods[i].name);
  for (int i = 0; i < svc->criticality.n_callers; i++)
    free(svc->criticality.callers[i].name);
  free(svc->retry_budget.pushback);
  for (size_t i = 0; i < svc->n_calls; i++) {
    free(svc->calls[i].method);
    for (size_t m = 0; m < svc->calls[i].n_when_method; m++)
      free(svc->calls[i].when_method[m]);
    free(svc->calls[i].when_method);
    retry_config_destroy(svc->calls[i].policy);
  }
  free(svc->calls);
  for (size_t i = 0; i < svc->n_faults; i++) {
    free(svc->faults[i].method);
    free(svc->faults[i].pushback);
    free(svc->faults[i].retry_after);
  }
  free(svc->faults);
  free(svc->ctl);
}

void model_config_destroy(model_config *c) {
  if (c == NULL) return;
  for (size_t i = 0; i < c->n_clients; i++)
    destroy_client(&c->clients[i]);
  free(c->clients);
  for (size_t i = 0; i < c->n_services; i++)
    destroy_service(&c->services[i]);
  free(c->services);
  model_ops_cfg_destroy(c->ops);
  free(c->name);
  free(c);
}
