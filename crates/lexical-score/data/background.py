#!/usr/bin/env python3
"""Writes `src/delivery/background.tsv`: how common each word is in ordinary text.

Run from `crates/lexical-score` with the `wordfreq` package installed
(`pip install wordfreq==3.1.1`):

    python3 data/background.py > src/delivery/background.tsv

The build reads the committed table and never runs this script or downloads anything. One line
per word: the word as the scorer's tokens spell it (NFKC, lowercase), a tab, and its Zipf
frequency in tenths (log10 of its occurrences per billion words), the highest over the languages
below. Only words at least as common as `MIN_ZIPF` are kept; for Chinese, Japanese and Korean only words
of one or two characters (the shape of the scorer's CJK bigrams) or of katakana only (a whole token).
"""

import math
import unicodedata

import wordfreq

LANGUAGES = ["en", "de", "fr", "es", "pt", "ru", "zh", "ja", "ko"]
MIN_ZIPF = 4.5
CJK = {"zh", "ja", "ko"}


def is_katakana(c):
    return "\u30a0" <= c <= "\u30ff"


def main():
    table = {}
    for lang in LANGUAGES:
        for word, freq in wordfreq.get_frequency_dict(lang, wordlist="best").items():
            zipf = math.log10(freq * 1e9)
            if zipf < MIN_ZIPF:
                continue
            token = unicodedata.normalize("NFKC", word).lower()
            if not token or not all(c.isalpha() for c in token):
                continue
            if lang in CJK and len(token) > 2 and not all(is_katakana(c) for c in token):
                continue
            if lang not in CJK and len(token) < 2:
                continue
            tenths = int(round(zipf * 10))
            table[token] = max(table.get(token, 0), tenths)
    print(f"# wordfreq 3.1.1; "
          f"languages {' '.join(LANGUAGES)}; Zipf >= {MIN_ZIPF}; CC BY-SA 4.0, see background.LICENSE")
    for token in sorted(table):
        print(f"{token}\t{table[token]}")


if __name__ == "__main__":
    main()
