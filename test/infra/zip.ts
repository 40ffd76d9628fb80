import { inflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  /** Unix mode bits from the central directory (0 when the archive was not made on Unix). */
  mode: number;
  data: Buffer;
}

/**
 * Reads a zip archive through its central directory, the way Lambda's unzip does, so a test can
 * check what a deployment artifact really holds. Stored and deflated entries only.
 */
export function readZip(archive: Buffer): ZipEntry[] {
  const endOffset = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (endOffset < 0) throw new Error('not a zip archive: no end of central directory');
  const count = archive.readUInt16LE(endOffset + 10);
  let offset = archive.readUInt32LE(endOffset + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (archive.readUInt32LE(offset) !== 0x02014b50) throw new Error(`bad central directory entry ${i}`);
    const method = archive.readUInt16LE(offset + 10);
    const compressedSize = archive.readUInt32LE(offset + 20);
    const nameLength = archive.readUInt16LE(offset + 28);
    const extraLength = archive.readUInt16LE(offset + 30);
    const commentLength = archive.readUInt16LE(offset + 32);
    const madeBy = archive.readUInt16LE(offset + 4) >> 8;
    const mode = madeBy === 3 ? archive.readUInt32LE(offset + 38) >>> 16 : 0;
    const localOffset = archive.readUInt32LE(offset + 42);
    const name = archive.toString('utf8', offset + 46, offset + 46 + nameLength);

    if (archive.readUInt32LE(localOffset) !== 0x04034b50) throw new Error(`bad local header for ${name}`);
    const localNameLength = archive.readUInt16LE(localOffset + 26);
    const localExtraLength = archive.readUInt16LE(localOffset + 28);
    const start = localOffset + 30 + localNameLength + localExtraLength;
    const raw = archive.subarray(start, start + compressedSize);
    const data = method === 8 ? inflateRawSync(raw) : method === 0 ? Buffer.from(raw) : undefined;
    if (!data) throw new Error(`unsupported compression ${method} for ${name}`);
    entries.push({ name, mode, data });

    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}
