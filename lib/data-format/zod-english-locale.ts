import { en } from 'zod/locales';
import * as z from 'zod/mini';

/**
 * zod/mini loads no locale, so without this every default issue message would read "Invalid input"
 * (classic zod sets English itself when it builds its first schema). Each module that builds
 * zod/mini schemas imports this one, so the texts stay the English ones whatever else a bundle holds:
 * lib/config.ts names every bad variable with them, and a stored policy that does not parse is logged
 * with them. The locale costs about 2.7 KiB of each bundle; giving every check an explicit message
 * instead would copy zod's wording (types received, key names) by hand for little less.
 * `zod/locales` rather than `z.locales`: through the namespace esbuild keeps every locale (260 KiB).
 */
z.config(en());
