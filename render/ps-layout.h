/* ps-layout.h: placing a scene's boxes, edges and clusters with Graphviz.
 *
 * This is the one place that knows Graphviz (libgvc, libcgraph): its
 * types, its global error state and its lack of re-entrancy stay behind
 * these two calls.  Layouts run one at a time (a global lock), so callers
 * may lay out from any thread.  Boxes are laid out at the sizes the scene
 * gives (ps_scene_size_nodes), with their shapes; the result goes back
 * into the scene as plain numbers (see ps-scene.h). */
#ifndef PS_LAYOUT_H
#define PS_LAYOUT_H

#include <stddef.h>

#include "ps-scene.h"

/* Lays out s with Graphviz `dot` (cheaper settings when s->fast); a
 * pinned scene keeps its node positions and gets straight edges, without
 * Graphviz.  On failure returns a negative code and puts Graphviz's message
 * in err. */
int ps_layout_scene (ps_scene *s, char *err, size_t errlen);

/* Routes edge e of a laid-out scene straight from box to box. */
int ps_layout_route_straight (ps_scene *s, uint32_t e);

/* Reads DOT text with Graphviz and lays it out with `engine` ("dot",
 * "neato", "nop2" for pinned positions, ...): 0 and the drawing's size in
 * points, or a negative code with Graphviz's message in err.  Checks that
 * exported DOT is what Graphviz accepts. */
int ps_layout_dot_text (const char *text, const char *engine, double *width, double *height,
                        char *err, size_t errlen);


#endif
