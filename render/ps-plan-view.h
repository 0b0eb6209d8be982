/* ps-plan-view.h: the plan view as a scene (ps-scene.h): the plan's steps
 * clustered per stream in issue order, with event record -> wait edges
 * (see ps-dag-view.h for how large graphs stay readable). */
#ifndef PS_PLAN_VIEW_H
#define PS_PLAN_VIEW_H

#include "ps-plan.h"
#include "ps-scene.h"
#include "ps-view.h"

/* Builds the plan view of p. */
int ps_plan_view_build (ps_scene *s, const ps_plan *p, const ps_view_options *o);

#endif
