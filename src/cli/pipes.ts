// A reader that stops early (`agentrun inspect ID | head`, `| true`) closes the pipe: the command
// then ends quietly with `code`, as Unix tools do, instead of dying of an unhandled EPIPE.
export function exitQuietlyWhenReaderLeaves(code: number): void {
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      process.exit(code);
    });
}
