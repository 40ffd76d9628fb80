/** One thing CloudFormation would refuse, located well enough to find it in the YAML. */
export interface TemplateProblem {
  /** The resource's logical id; `Outputs.<name>`, `Conditions.<name>` or `Template` elsewhere. */
  logicalId: string;
  /** Where inside it, e.g. `Properties.KeySchema[0].KeyType`, `DependsOn[1]`, `Type`. */
  path: string;
  /** The offending name: the property, attribute, reference, variable or resource type. */
  name: string;
  message: string;
}

/** A problem as one line, for test output and the command line. */
export function formatProblem(problem: TemplateProblem): string {
  return `${problem.logicalId} ${problem.path}: ${problem.message}`;
}

/** Where the walk is: which top-level entry, and the path inside it. */
export interface At {
  logicalId: string;
  path: string;
}

/** `at` one key further in (`Properties` then `Properties.KeySchema`). */
export function inside(at: At, key: string): At {
  return { ...at, path: at.path ? `${at.path}.${key}` : key };
}

/** `at` one list element further in (`DependsOn[1]`). */
export function element(at: At, index: number): At {
  return { ...at, path: `${at.path}[${index}]` };
}

/**
 * Where the checks report, in template order. A value that may have several types is checked
 * against each in turn with `collect`, which keeps that attempt's problems apart, so that only
 * those of the alternative that fits best are kept.
 */
export class Problems {
  private sink: TemplateProblem[] = [];

  get all(): readonly TemplateProblem[] {
    return this.sink;
  }

  report(at: At, name: string, message: string): void {
    this.sink.push({ logicalId: at.logicalId, path: at.path, name, message });
  }

  add(problems: readonly TemplateProblem[]): void {
    this.sink.push(...problems);
  }

  /** The problems `check` reports, kept apart from the others. */
  collect(check: () => void): TemplateProblem[] {
    const outer = this.sink;
    this.sink = [];
    try {
      check();
      return this.sink;
    } finally {
      this.sink = outer;
    }
  }
}
