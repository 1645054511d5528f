/** sha256 over the paths and contents of the build's inputs under `root`, in a fixed order. */
export declare function sourceHash(root: string): string;
