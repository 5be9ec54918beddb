//! The option grammars of the read-only commands: for each, the options known to only read.
//! GNU programs accept abbreviated long options, so their every long option is listed (unsafe
//! ones marked `!`) and an abbreviation resolves as the program resolves it. Programs with
//! their own parsers (ripgrep, jq, tree, git) take exact names only. What is not listed here is
//! unknown, and an unknown option makes a command not read-only. Options that read a list of
//! further files to open (`--files0-from`, `file -f`) are unsafe too: the files they name
//! could not be checked against the working directories.

use super::options::Grammar;

const fn gnu(flags: &'static str, valued: &'static str, long: &'static str) -> Grammar<'static> {
    Grammar {
        flags,
        valued,
        long,
        digits: false,
        abbrev: true,
    }
}

/// A grammar that takes options by their exact names only (no abbreviations).
pub(super) const fn exact(
    flags: &'static str,
    valued: &'static str,
    long: &'static str,
) -> Grammar<'static> {
    Grammar {
        flags,
        valued,
        long,
        digits: false,
        abbrev: false,
    }
}

const HV: &str = "help version";

const LS: Grammar = gnu(
    "aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxXZ1",
    "IwT",
    "all almost-all author block-size= escape ignore-backups color? classify? directory dired \
     file-type format= full-time group-directories-first no-group human-readable si \
     dereference-command-line dereference-command-line-symlink-to-dir hide= hyperlink? \
     indicator-style= inode ignore= kibibytes literal numeric-uid-gid hide-control-chars \
     show-control-chars quote-name quoting-style= reverse recursive size sort? time? \
     time-style= tabsize= width= context zero dereference help version",
);
const CAT: Grammar = gnu(
    "AbeEnstTuv",
    "",
    "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting \
     help version",
);
const HEAD: Grammar = Grammar {
    digits: true,
    ..gnu(
        "qvz",
        "cn",
        "bytes= lines= quiet silent verbose zero-terminated help version",
    )
};
const TAIL: Grammar = Grammar {
    digits: true,
    ..gnu(
        "fFqvz",
        "cns",
        "bytes= follow? lines= max-unchanged-stats= pid= quiet retry silent sleep-interval= \
         verbose zero-terminated help version",
    )
};
const GREP: Grammar = gnu(
    "EFGPiywxzsvVbHhnTZaIrRcLloqU",
    "efmABCdD",
    "extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case \
     no-ignore-case word-regexp line-regexp null-data no-messages invert-match version help \
     max-count= byte-offset line-number no-line-number line-buffered with-filename \
     no-filename label= only-matching quiet silent binary-files= text directories= devices= \
     recursive dereference-recursive include= exclude= exclude-from= exclude-dir= \
     files-without-match files-with-matches count initial-tab null before-context= \
     after-context= context= color? colour? binary no-group-separator group-separator=",
);
/// ripgrep: `--pre` and `--hostname-bin` run programs, `-z` runs decompressors.
const RG: Grammar = exact(
    "isSwxvclnNHIoqUuFPLa0p",
    "efgtTABCmjMrdE",
    "ignore-case case-sensitive smart-case word-regexp line-regexp invert-match count \
     count-matches files-with-matches files-without-match files line-number no-line-number \
     with-filename no-filename heading no-heading hidden no-hidden no-ignore no-ignore-vcs \
     no-ignore-dot no-ignore-global no-ignore-parent no-ignore-files follow fixed-strings \
     glob= iglob= type= type-not= type-list after-context= before-context= context= \
     max-count= max-depth= max-filesize= json only-matching quiet replace= sort= sortr= \
     stats trim vimgrep column no-column multiline multiline-dotall pcre2 no-messages null \
     color= colors= pretty unrestricted text binary regexp= file= max-columns= \
     max-columns-preview passthru byte-offset encoding= crlf null-data no-config \
     glob-case-insensitive ignore-file-case-insensitive one-file-system path-separator= \
     field-match-separator= field-context-separator= context-separator= no-context-separator \
     help version !pre= !pre-glob= !hostname-bin= !search-zip",
);
const WC: Grammar = gnu(
    "cmlLw",
    "",
    "bytes chars lines !files0-from= max-line-length words total= help version",
);
const DIFF: Grammar = gnu(
    "abBdeEiInNpPqrstTuwyZc",
    "CUDFISWxX",
    "normal brief report-identical-files context? unified? ed rcs side-by-side left-column \
     suppress-common-lines show-c-function show-function-line= label= expand-tabs \
     initial-tab tabsize= suppress-blank-empty !paginate recursive no-dereference new-file \
     unidirectional-new-file ignore-file-name-case no-ignore-file-name-case exclude= \
     exclude-from= starting-file= from-file= to-file= ignore-case ignore-tab-expansion \
     ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines \
     ignore-matching-lines= text strip-trailing-cr ifdef= old-group-format= \
     new-group-format= unchanged-group-format= changed-group-format= line-format= \
     old-line-format= new-line-format= unchanged-line-format= minimal horizon-lines= \
     speed-large-files color? palette= width= help version",
);
const STAT: Grammar = gnu(
    "Lft",
    "c",
    "dereference file-system cached= format= printf= terse help version",
);
const DU: Grammar = gnu(
    "0abcDhHkLlmPsSx",
    "dBtX",
    "null all apparent-size block-size= bytes total dereference-args dereference \
     no-dereference !files0-from= human-readable inodes count-links max-depth= si summarize \
     separate-dirs one-file-system threshold= time? time-style= exclude-from= exclude= \
     help version",
);
const DF: Grammar = gnu(
    "ahHiklPTv",
    "Btx",
    "all block-size= human-readable si inodes local no-sync output? portability print-type \
     sync total type= exclude-type= help version",
);
/// sort: `-o`/`--output` writes, `--compress-program` runs, `-T` writes temporary files.
const SORT: Grammar = gnu(
    "bcCdfghiMmnRrsuzV",
    "ktS",
    "batch-size= buffer-size= check? !compress-program= debug dictionary-order \
     field-separator= !files0-from= general-numeric-sort help human-numeric-sort ignore-case \
     ignore-leading-blanks ignore-nonprinting key= merge month-sort numeric-sort !output= \
     parallel= random-sort random-source= reverse sort= stable !temporary-directory= unique \
     version version-sort zero-terminated",
);
/// uniq writes its second operand; the caller allows at most one.
const UNIQ: Grammar = gnu(
    "cdDiuz",
    "fsw",
    "all-repeated? check-chars= count group? ignore-case repeated skip-chars= skip-fields= \
     unique zero-terminated help version",
);
const CUT: Grammar = gnu(
    "nsz",
    "bcdf",
    "bytes= characters= complement delimiter= fields= only-delimited output-delimiter= \
     zero-terminated help version",
);
const TR: Grammar = gnu(
    "cCdst",
    "",
    "complement delete squeeze-repeats truncate-set1 help version",
);
const NL: Grammar = gnu(
    "p",
    "bdfhilnsvw",
    "body-numbering= section-delimiter= footer-numbering= header-numbering= \
     line-increment= join-blank-lines= number-format= no-renumber number-separator= \
     starting-line-number= number-width= help version",
);
/// file: `-C` compiles a magic file, `-p` resets access times, `-z` runs decompressors.
const FILE: Grammar = gnu(
    "bcdEhiklLNnrsS0",
    "eFmP",
    "apple brief checking-printout !compile debug dereference exclude= exclude-quiet= \
     extension !files-from= help keep-going list magic-file= mime mime-encoding mime-type \
     no-buffer no-dereference no-pad no-sandbox !preserve-date parameter= print0 raw \
     separator= special-files !uncompress !uncompress-noreport version",
);
/// tree: `-o FILE` writes.
const TREE: Grammar = exact(
    "adlfxpsughDFqNQrtcUvCASniJX",
    "LPI",
    "noreport dirsfirst prune gitignore matchdirs du si filelimit= charset= ignore-case \
     help version",
);
const BASENAME: Grammar = gnu("az", "s", "multiple suffix= zero help version");
const DIRNAME: Grammar = gnu("z", "", "zero help version");
const REALPATH: Grammar = gnu(
    "eLmPqsz",
    "",
    "canonicalize-existing canonicalize-missing logical physical quiet relative-to= \
     relative-base= strip no-symlinks zero help version",
);
const READLINK: Grammar = gnu(
    "efmnqsvz",
    "",
    "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent \
     verbose zero help version",
);
const CMP: Grammar = gnu(
    "bls",
    "in",
    "print-bytes ignore-initial= verbose bytes= quiet silent help version",
);
const COMM: Grammar = gnu(
    "123z",
    "",
    "check-order nocheck-order output-delimiter= total zero-terminated help version",
);
/// The checksum tools; `--check` reads the files a list names, wherever they are.
const SUM: Grammar = gnu(
    "btzw",
    "",
    "binary !check tag text ignore-missing quiet status strict warn zero help version",
);
const ID: Grammar = gnu(
    "ugGnrzaZ",
    "",
    "user group groups name real zero context help version",
);
const UNAME: Grammar = gnu(
    "asnrvmpio",
    "",
    "all kernel-name nodename kernel-release kernel-version machine processor \
     hardware-platform operating-system help version",
);
/// date: `-s` sets the clock; operands are checked by the caller (only `+FORMAT`).
const DATE: Grammar = gnu(
    "uR",
    "dfr",
    "date= file= iso-8601? rfc-email rfc-3339= reference= !set= utc universal debug \
     resolution help version",
);
/// jq: no option runs anything; the filter text is checked by the caller, so `-f FILE`
/// (a filter from a file) is not accepted.
const JQ: Grammar = exact(
    "cnrjasSCMeR",
    "",
    "compact-output null-input raw-output raw-output0 join-output ascii-output slurp \
     sort-keys color-output monochrome-output tab indent= unbuffered stream stream-errors \
     seq exit-status raw-input arg argjson slurpfile rawfile args jsonargs help version",
);
const SEQ: Grammar = gnu("w", "fs", "equal-width format= separator= help version");
const TAC: Grammar = gnu("br", "s", "before regex separator= help version");
/// util-linux rev.
const REV: Grammar = exact("0hV", "", "zero help version");
/// od: `-w[N]` and `--strings[=N]` take optional values, so only their bare forms are known.
const OD: Grammar = gnu(
    "abcdfilosvxw",
    "AjNtS",
    "address-radix= endian= skip-bytes= read-bytes= strings? format= output-duplicates \
     traditional width? help version",
);
/// util-linux column (no option writes); only the common ones, by exact name.
const COLUMN: Grammar = exact(
    "txJ",
    "socN",
    "table separator= output-separator= fillrows output-width= json table-columns= help \
     version",
);
/// hostname: an operand or `-F FILE` sets the name; the caller allows no operand.
const HOSTNAME: Grammar = exact(
    "adfiIAsy",
    "",
    "alias domain fqdn long ip-address all-ip-addresses all-fqdns short yp nis help version",
);
const UPTIME: Grammar = exact("psV", "", "pretty since help version");
const FREE: Grammar = exact(
    "bkmghltvwV",
    "cs",
    "bytes kilo mega giga tera peta kibi mebi gibi tebi pebi human si lohi total committed \
     wide count= seconds= help version",
);
const PWD: Grammar = exact("LP", "", HV);
const WHICH: Grammar = exact("as", "", HV);
const TYPE: Grammar = exact("afpPt", "", "");
const CD: Grammar = exact("LPe@", "", "");

/// The grammar of a read-only command, by program name.
pub fn grammar(program: &str) -> Option<&'static Grammar<'static>> {
    Some(match program {
        "ls" => &LS,
        "cat" => &CAT,
        "head" => &HEAD,
        "tail" => &TAIL,
        "grep" | "egrep" | "fgrep" => &GREP,
        "rg" => &RG,
        "wc" => &WC,
        "diff" => &DIFF,
        "stat" => &STAT,
        "du" => &DU,
        "df" => &DF,
        "sort" => &SORT,
        "uniq" => &UNIQ,
        "cut" => &CUT,
        "tr" => &TR,
        "nl" => &NL,
        "file" => &FILE,
        "tree" => &TREE,
        "basename" => &BASENAME,
        "dirname" => &DIRNAME,
        "realpath" => &REALPATH,
        "readlink" => &READLINK,
        "cmp" => &CMP,
        "comm" => &COMM,
        "md5sum" | "sha1sum" | "sha256sum" | "sha512sum" => &SUM,
        "id" => &ID,
        "uname" => &UNAME,
        "date" => &DATE,
        "jq" => &JQ,
        "seq" => &SEQ,
        "tac" => &TAC,
        "rev" => &REV,
        "od" => &OD,
        "column" => &COLUMN,
        "hostname" => &HOSTNAME,
        "uptime" => &UPTIME,
        "free" => &FREE,
        "pwd" => &PWD,
        "which" => &WHICH,
        "type" => &TYPE,
        "cd" => &CD,
        _ => return None,
    })
}
