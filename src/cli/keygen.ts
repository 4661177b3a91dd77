// Placeholder until its issue lands; replaced by the real subcommand.
export async function run(_args: string[], _env: NodeJS.ProcessEnv): Promise<number> {
  process.stderr.write('vcproxy keygen: not implemented yet\n');
  return 1;
}
