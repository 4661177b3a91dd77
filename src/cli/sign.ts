// Placeholder until its dependencies land; replaced by the real subcommand.
export async function run(_args: string[], _env: NodeJS.ProcessEnv): Promise<number> {
  process.stderr.write('vcproxy sign: not implemented yet\n');
  return 1;
}
