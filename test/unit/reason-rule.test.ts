import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attributionSchema, reasonProblem, reasonSentence, visibleCharacters } from '../../lib/contract/attribution.js';
import { observationsToolInput } from '../../lib/contract/mcp-tools.js';

describe('Function: reasonProblem (the one reason rule of the door and the private operation)', () => {
  it.each([
    ['no reason', undefined, 'missing'],
    ['an empty reason', '', 'blank'],
    ['spaces only', '    ', 'blank'],
    ['NULs and zero-width spaces only', '\u0000\u200B\u200B\u0000', 'blank'],
    ['two visible characters among invisible ones', 'o\u200Bk\u202E', 'tooShort'],
    ['two characters', 'ok', 'tooShort'],
    ['501 characters', 'r'.repeat(501), 'tooLong'],
    ['three letters', 'abc', undefined],
    ['three letters of another script', '磁盘满', undefined],
    ['a reason with surrounding spaces', '  disk alert  ', undefined],
  ])('finds %s %s', (_what, reason, problem) => {
    expect(reasonProblem(reason)).toBe(problem);
  });

  it('counts letters, digits and signs as visible; spaces, control and format characters not', () => {
    expect(visibleCharacters('a b\u0000c\u200Bd\u202E!')).toBe(5);
  });

  it('gives the same verdict at the door (tool argument) and at the private operation (header)', () => {
    const tool = observationsToolInput('servicenow');
    const header = attributionSchema('servicenow');
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ' ', '\u0000', '\u200B', '\u202E', '磁', '\n'), maxLength: 8 }), (reason) => {
        const atDoor = tool.safeParse({ agent_id: 'a', reason });
        const atOperation = header.safeParse({ reason });
        expect(atDoor.success).toBe(atOperation.success);
        expect(atDoor.success).toBe(reasonProblem(reason) === undefined);
        if (!atOperation.success)
          expect(atOperation.error.issues[0]?.message).toBe(reasonSentence('X-Service-Reason', reasonProblem(reason)!, reason));
      }),
    );
  });
});
