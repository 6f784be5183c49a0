#!/usr/bin/env bash
# Fuzzes the HTTP request parser with libFuzzer + AddressSanitizer.
#   fuzz/run.sh [seconds]      (default 60; the corpus grows in .build-fuzz/corpus)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=.build-fuzz
mkdir -p "$out/corpus"
sources=()
for name in Parsing/RequestParser Parsing/RequestParser+Head Parsing/RequestHead Parsing/HTTPParseError \
            Parsing/PercentDecoding Parsing/QueryParameters Messages/HTTPHeaders Messages/HTTPMethod \
            Messages/HTTPStatus Parsing/ByteSet; do
    sources+=("Sources/HTTP/$name.swift")
done
swiftc -O -sanitize=fuzzer,address -parse-as-library fuzz/RequestParserFuzzer.swift "${sources[@]}" \
    -o "$out/request-parser-fuzzer"
# Seeds: a few well-formed requests, prefixed by the split-size byte the harness reads.
printf '\x05GET /api/posts?limit=5&cursor=a%%2Bb HTTP/1.1\r\nHost: x\r\n\r\n' > "$out/corpus/seed-get"
printf '\x03POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello' > "$out/corpus/seed-post"
printf '\x07POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;e=1\r\nabc\r\n0\r\nT: 1\r\n\r\n' > "$out/corpus/seed-chunked"
"$out/request-parser-fuzzer" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 "$out/corpus"
