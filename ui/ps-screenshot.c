/* ps-screenshot.c: saves a PNG of the window as GTK draws it: the window's
 * render nodes are rendered into a texture by the window's own renderer,
 * encoded in memory and written through ps_file_write_bytes. */
#include "ps-window-private.h"

#include "ps-file.h"

gboolean
ps_window_save_png (PsWindow *self, const char *path, GError **error)
{
  g_return_val_if_fail (PS_IS_WINDOW (self), FALSE);
  GtkWidget *w = GTK_WIDGET (self);
  int width = gtk_widget_get_width (w), height = gtk_widget_get_height (w);
  GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (w));
  if (width <= 0 || height <= 0 || !renderer)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                   "the window is not shown yet (%dx%d)", width, height);
      return FALSE;
    }
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (w);
  GtkSnapshot *content = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, content, width, height);
  GskRenderNode *window = gtk_snapshot_free_to_node (content);
  if (!window)
    {
      /* GTK has no picture of a window that is waiting for its size. */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PENDING, "the window has not been drawn yet");
      return FALSE;
    }
  /* An opaque background, as a window manager would show the window. */
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gtk_snapshot_append_color (snapshot, &(GdkRGBA){ 1, 1, 1, 1 },
                             &GRAPHENE_RECT_INIT (0, 0, width, height));
  gtk_snapshot_append_node (snapshot, window);
  gsk_render_node_unref (window);
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
  GdkTexture *texture = gsk_renderer_render_texture (renderer, node,
                                                     &GRAPHENE_RECT_INIT (0, 0, width, height));
  gsk_render_node_unref (node);
  g_autoptr (GBytes) png = gdk_texture_save_to_png_bytes (texture);
  g_object_unref (texture);
  /* Written all or nothing, and never over an input. */
  gsize len = 0;
  const void *data = g_bytes_get_data (png, &len);
  char why[512];
  if (ps_file_write_bytes (path, data, len, why, sizeof why) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", why);
      return FALSE;
    }
  return TRUE;
}
