import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';

/**
 * Text as a CommonMark + GFM renderer turns it into HTML: micromark (the reference implementation
 * of both) with its GFM extension (autolink literals, tables, strikethrough, task lists, footnotes),
 * raw HTML let through as a host that trusts its markdown would, so that a tag the text forms shows
 * up as a tag.
 */
export function renderMarkdown(text: string): string {
  return micromark(text, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });
}

/** The names of the HTML elements in `html`, each once, opening and closing tags alike. */
export function elementsIn(html: string): Set<string> {
  return new Set([...html.matchAll(/<\/?([A-Za-z][A-Za-z0-9-]*)/g)].map((m) => m[1]!.toLowerCase()));
}

/** The entity references micromark writes for text (and only these): `&amp;`, `&lt;`, `&gt;`, `&quot;`. */
const WRITTEN_ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"' };

/** The text a reader sees in micromark's `html`: its tags dropped, the entity references it writes read back. */
export function textOf(html: string): string {
  return html.replace(/<[^>]*>/g, '').replace(/&(?:amp|lt|gt|quot);/g, (entity) => WRITTEN_ENTITIES[entity] ?? entity);
}
