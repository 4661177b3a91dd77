/**
 * A small Dockerfile reader for the container tests (no Docker engine exists on these
 * machines). It understands what our Dockerfile uses: comments, line continuations,
 * `FROM … AS name` stages, exec-form (JSON) and shell-form arguments, `ENV k=v …`.
 */
export interface Instruction {
  keyword: string;
  /** The raw argument text after the keyword, continuations joined. */
  args: string;
  line: number;
}

export interface Stage {
  name: string | undefined;
  base: string;
  instructions: Instruction[];
}

export function parseDockerfile(text: string): { preamble: Instruction[]; stages: Stage[] } {
  const preamble: Instruction[] = [];
  const stages: Stage[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const startLine = i + 1;
    let line = lines[i]!;
    if (/^\s*(#|$)/.test(line)) continue;
    // Join continuation lines; comment lines inside a continuation are skipped (Docker does too).
    while (/\\\s*$/.test(line) && i + 1 < lines.length) {
      line = line.replace(/\\\s*$/, ' ');
      i++;
      const next = lines[i]!;
      if (/^\s*#/.test(next)) continue;
      line += next;
    }
    const m = /^\s*([A-Za-z]+)\s+([\s\S]*)$/.exec(line);
    if (!m) throw new Error(`Dockerfile line ${startLine}: cannot parse "${line}"`);
    const ins: Instruction = { keyword: m[1]!.toUpperCase(), args: m[2]!.trim(), line: startLine };
    if (ins.keyword === 'FROM') {
      const f = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!f) throw new Error(`Dockerfile line ${startLine}: bad FROM`);
      stages.push({ base: f[1]!, name: f[2], instructions: [] });
      continue;
    }
    const stage = stages[stages.length - 1];
    if (stage) stage.instructions.push(ins);
    else preamble.push(ins);
  }
  return { preamble, stages };
}

/** Exec-form arguments (`["a", "b"]`) as an array; shell form gives undefined. */
export function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  const v: unknown = JSON.parse(args);
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new Error(`not an exec-form array: ${args}`);
  return v as string[];
}

/** `ENV a=1 b="two"` → {a: '1', b: 'two'} (only the key=value form). */
export function envPairs(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g;
  for (const m of args.matchAll(re)) {
    const raw = m[2]!;
    out[m[1]!] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
  return out;
}

export function findAll(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}

/** The last instruction of a kind in a stage (Docker uses the last ENTRYPOINT/CMD/USER). */
export function last(stage: Stage, keyword: string): Instruction | undefined {
  const all = findAll(stage, keyword);
  return all[all.length - 1];
}
