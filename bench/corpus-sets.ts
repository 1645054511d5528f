// The numbered blind sets' names and which of them are held out, shared by the bench and the
// blind sets' scripts (scripts/blind-sets/) so both read one list and one naming.

/**
 * The numbered sets (`checker-corpus-fifth.tsv` … `checker-corpus-four-hundred-and-eighty-eighth.tsv`)
 * are found by name; these are the ones held out, their misses printed only with `--list-held-out`. A set
 * read and tuned on leaves this list, and its part is named `…-tuning` from then on.
 */
export const HELD_OUT = new Set<number>([1147, 1148, 1149, 1150, 1151, 1152, 1153, 1154]);

const ONES = ['', ...'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split(' ')];
const ONES_ORDINAL = [
  '',
  ...'first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth'.split(
    ' ',
  ),
];
const TENS = ['', '', ...'twenty thirty forty fifty sixty seventy eighty ninety'.split(' ')];
const TENS_ORDINAL = ['', '', ...'twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth'.split(' ')];
const belowHundred = (n: number): string =>
  n < 20 ? ONES_ORDINAL[n]! : n % 10 === 0 ? TENS_ORDINAL[n / 10]! : `${TENS[Math.floor(n / 10)]}-${ONES_ORDINAL[n % 10]}`;
/**
 * A set's ordinal in words, as its file is named: 5 → fifth, 101 → hundred-and-first, 357 → three-hundred-and-fifty-seventh,
 * 1000 → thousandth, 1002 → thousand-and-second, 1101 → thousand-one-hundred-and-first.
 */
export const ordinalWords = (n: number, counted = false): string => {
  // Past the thousand-and-ninety-ninth the hundreds are counted out (`thousand-one-hundred-and-first`).
  if (n >= 1000) return n === 1000 ? 'thousandth' : n < 1100 ? `thousand-and-${ordinalWords(n - 1000)}` : `thousand-${ordinalWords(n - 1000, true)}`;
  if (n < 100) return belowHundred(n);
  // The first hundred's sets are named without "one" (`hundredth`, `hundred-and-first`), as they were written.
  const hundreds = n < 200 && !counted ? 'hundred' : `${ONES[Math.floor(n / 100)]}-hundred`;
  return n % 100 === 0 ? `${hundreds}th` : `${hundreds}-and-${belowHundred(n % 100)}`;
};
