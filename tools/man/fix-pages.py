#!/usr/bin/env python3
"""Turns swift-argument-parser's `generate-manual --multi-page` output into pages man-db finds and
that format without warnings. Run by tools/man/make-pages.sh; standard library only.

    python3 tools/man/fix-pages.py DIR

rewrites every `*.1` page in DIR in place. What the generator (argument-parser 1.8) gets wrong, and
what this script does about it:

1. Names. It names a subcommand's page `cipherdb.keys.rotate.1`, with `.Dt CIPHERDB.KEYS.ROTATE` and
   `.Nm "cipherdb keys rotate"`, so `man cipherdb-keys-rotate` finds nothing (man-db looks a name up
   as a file name). Pages are renamed `cipherdb-keys-rotate.1`, the git(1) way: the NAME section and
   `.Dt` carry that name, SYNOPSIS shows the command as it is typed (`cipherdb keys rotate`), and
   every `.Xr` names the new pages. SEE ALSO of a subcommand's page also names its parents.

2. Free text. Abstracts and discussions are written out as they are in the help screens: blank
   lines (groff: "Empty input line"; mandoc: "blank line in fill mode"), indented example lines that
   fill mode runs together, several sentences on one line (mandoc: "new sentence, new line"), and a
   `.Pp` where no paragraph can start (before `.It` and `.El`). Here a blank line ends a paragraph,
   each other line of a discussion is a paragraph of its own (the help screens break there too),
   indented lines become a literal display (`.Bd -literal`), each sentence starts a new input line,
   and a period that ends no sentence (`e.g.`, `...`) is marked with `\\&`.

3. EXIT STATUS. The generator writes `.Ex -std` ("exits 0 on success, and >0 if an error occurs")
   into every page. The real table lives in the CLI (`ExitStatus` in
   Sources/CipherCLI/Errors/ExitStatus.swift) and reaches the root command's help as its "Exit codes:"
   block; that block is moved from the root page's DESCRIPTION into its EXIT STATUS as a tagged list.
   The other pages point there.

The generator drops every character that is not ASCII from help texts; ManPageTests checks that
none is left in them, since nothing here can bring a dropped character back.
"""

import os
import re
import sys

# The macros the generator writes. A line starting with a dot that is none of them came from a help
# text, and is text.
GENERATED_MACROS = {"Dd", "Dt", "Os", "Sh", "Ss", "Nm", "Nd", "Ar", "Op", "Oo", "Oc", "Fl", "Bl", "It", "El", "Pp", "Xr", "Ex", "Sy"}

# The heading of the exit code table in the root command's discussion (CipherDBCommand), and its rows:
# "  64   usage error: ...".
EXIT_CODES_HEADING = "Exit codes:"
EXIT_CODE_ROW = re.compile(r"^\s+(\d+)\s+(\S.*)$")

# End of a sentence: . ! or ? and closing delimiters, then blanks, then the next word.
SENTENCE_END = re.compile(r"([.!?][)\]\"']*)( +)(?=(\S))")


def is_macro(line):
    """Whether an input line is one of the generator's macro lines (or a comment)."""
    if line.startswith('.\\"'):
        return True
    if not line.startswith("."):
        return False
    name = line[1:].split(" ", 1)[0]
    return name in GENERATED_MACROS


def escape_text_start(line):
    """A text line may not start with a dot or an apostrophe (a roff request) or a blank."""
    if line.startswith((".", "'", " ")):
        return "\\&" + line
    return line


def split_sentences(line):
    """One input line per sentence. A period (or ! or ?) followed by a lower-case word or a digit
    (`e.g. the`, `ATTACH ... and`) ends no sentence and is marked `\\&` instead."""
    pieces = []
    start = 0
    for match in SENTENCE_END.finditer(line):
        following = match.group(3)
        if following.islower() or following.isdigit():
            continue
        pieces.append(line[start : match.end(1)])
        start = match.end()
    pieces.append(line[start:])
    result = []
    for piece in pieces:
        # Periods left mid-line end no sentence: mark them so that neither groff (two spaces) nor
        # mandoc (a warning) takes them for one.
        piece = SENTENCE_END.sub(lambda m: m.group(1) + "\\&" + m.group(2), piece)
        result.append(escape_text_start(piece))
    return result


def literal_block(lines):
    """Indented lines (examples, tables) as a literal display, their common indent removed."""
    indent = min(len(line) - len(line.lstrip(" ")) for line in lines)
    body = []
    for line in lines:
        text = line[indent:]
        body.append("\\&" + text if text.startswith((".", "'")) else text)
    return [".Bd -literal -offset indent"] + body + [".Ed"]


def text_run(lines):
    """Macro-free input lines (a help text) as mdoc: paragraphs, one sentence a line, and literal
    displays for the indented lines."""
    out = []

    def paragraph_break():
        if out and out[-1] != ".Pp":
            out.append(".Pp")

    index = 0
    while index < len(lines):
        line = lines[index]
        if line.strip() == "":
            index += 1
            continue
        if line.startswith(" "):
            block = []
            while index < len(lines) and (lines[index].startswith(" ") or lines[index].strip() == ""):
                if lines[index].strip() == "" and (index + 1 >= len(lines) or not lines[index + 1].startswith(" ")):
                    break
                block.append(lines[index])
                index += 1
            out.extend(literal_block([b for b in block if b.strip()]))
            continue
        paragraph_break()
        out.extend(split_sentences(line))
        index += 1
    # Drop a paragraph break the run may have started with.
    while out and out[0] == ".Pp":
        out.pop(0)
    return out


def extract_exit_codes(lines):
    """Removes the "Exit codes:" block from a help text and returns (text, [(code, meaning)])."""
    for index, line in enumerate(lines):
        if line.strip() != EXIT_CODES_HEADING:
            continue
        rows = []
        end = index + 1
        while end < len(lines) and EXIT_CODE_ROW.match(lines[end]):
            match = EXIT_CODE_ROW.match(lines[end])
            rows.append((match.group(1), match.group(2)))
            end += 1
        if rows:
            return lines[:index] + lines[end:], rows
    return lines, []


def page_words(file_name):
    """`cipherdb.keys.rotate.1` -> ["cipherdb", "keys", "rotate"]."""
    return file_name[: -len(".1")].split(".")


def fix_page(text, words, section):
    """The page of the command `words` (["cipherdb", "keys", "rotate"]), fixed."""
    name = "-".join(words)
    lines = text.split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    out = []
    exit_rows = []
    current_section = ""
    index = 0
    while index < len(lines):
        line = lines[index]
        if not is_macro(line):
            run = []
            while index < len(lines) and not is_macro(lines[index]):
                run.append(lines[index])
                index += 1
            if len(words) == 1 and current_section == "DESCRIPTION" and not exit_rows:
                run, exit_rows = extract_exit_codes(run)
            out.extend(text_run(run))
            continue
        index += 1
        if line.startswith(".Sh "):
            current_section = line[4:].strip('"').upper()
        if line.startswith(".Dt "):
            out.append(f".Dt {name.upper()} {section}")
        elif line.startswith(".Nm") and current_section == "NAME":
            out.append(f".Nm {name}")
        elif line == ".Nm" and current_section == "SYNOPSIS":
            out.append(".Nm " + " ".join(words))
        elif line.startswith(".Xr "):
            parts = line.split(" ")
            parts[1] = parts[1].replace(".", "-")
            out.append(" ".join(parts))
        elif line.startswith('.\\" "Generated by swift-argument-parser"'):
            out.append('.\\" Generated by swift-argument-parser, fixed by tools/man/fix-pages.py')
        else:
            out.append(line)
    out = drop_misplaced_paragraphs(out)
    out = replace_exit_status(out, words, exit_rows, section)
    out = complete_see_also(out, words, section)
    return "\n".join(out) + "\n"


def drop_misplaced_paragraphs(lines):
    """`.Pp` starts no paragraph right before `.It`, `.El`, `.Sh` or `.Bd`, or right after `.Sh`."""
    result = []
    for index, line in enumerate(lines):
        if line == ".Pp":
            following = lines[index + 1] if index + 1 < len(lines) else ".Sh"
            previous = result[-1] if result else ".Sh"
            if following.startswith((".It", ".El", ".Sh", ".Bd", ".Pp")) or previous.startswith((".Sh", ".Pp", ".Bl", ".It")):
                continue
        result.append(line)
    return result


def section_bounds(lines, title):
    """(start, end) of the section `title` (its .Sh line up to the next .Sh), or None."""
    for start, line in enumerate(lines):
        if line.startswith(".Sh ") and line[4:].strip('"').upper() == title:
            end = start + 1
            while end < len(lines) and not lines[end].startswith(".Sh "):
                end += 1
            return start, end
    return None


def replace_exit_status(lines, words, rows, section):
    """The root page's EXIT STATUS lists the exit codes; the others point to it."""
    bounds = section_bounds(lines, "EXIT STATUS")
    if bounds is None:
        return lines
    if len(words) == 1:
        if not rows:
            raise SystemExit(f"fix-pages: no '{EXIT_CODES_HEADING}' table in the {words[0]} page's DESCRIPTION")
        body = [".Bl -tag -width Ds -compact"]
        for code, meaning in rows:
            body += [f".It {code}"] + split_sentences(meaning)
        body.append(".El")
    else:
        body = [
            "Exits 0 on success, and with one of the codes listed in EXIT STATUS of",
            f".Xr {words[0]} {section}",
            "otherwise.",
        ]
    start, end = bounds
    return lines[:start] + ['.Sh "EXIT STATUS"'] + body + lines[end:]


def complete_see_also(lines, words, section):
    """SEE ALSO of a subcommand's page names its parents too (cipherdb-keys-rotate: cipherdb, cipherdb-keys)."""
    parents = ["-".join(words[:count]) for count in range(1, len(words))]
    if not parents:
        return lines
    bounds = section_bounds(lines, "SEE ALSO")
    names = []
    if bounds is not None:
        start, end = bounds
        for line in lines[start + 1 : end]:
            if line.startswith(".Xr "):
                names.append(line.split(" ")[1])
        lines = lines[:start] + lines[end:]
    else:
        authors = section_bounds(lines, "AUTHORS")
        start = authors[0] if authors else len(lines)
    names = sorted(set(names) | set(parents))
    block = ['.Sh "SEE ALSO"'] + [f".Xr {name} {section}" + (" ," if index < len(names) - 1 else "") for index, name in enumerate(names)]
    return lines[:start] + block + lines[start:]


def main(arguments):
    if len(arguments) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 64
    directory = arguments[0]
    pages = sorted(name for name in os.listdir(directory) if name.endswith(".1"))
    if not pages:
        print(f"fix-pages: no pages in {directory}", file=sys.stderr)
        return 66
    for page in pages:
        words = page_words(page)
        with open(os.path.join(directory, page), encoding="utf-8") as handle:
            text = handle.read()
        fixed = fix_page(text, words, 1)
        target = os.path.join(directory, "-".join(words) + ".1")
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(fixed)
        if target != os.path.join(directory, page):
            os.remove(os.path.join(directory, page))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
