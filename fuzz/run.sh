#!/usr/bin/env bash
# Fuzzes the HTTP request parser and the multipart parser with libFuzzer + AddressSanitizer.
#   fuzz/run.sh [seconds]      (default 60 for each; corpora grow in .build-fuzz/)
# SwiftPM cannot link a libFuzzer executable target, so each harness is compiled with swiftc
# from the parser's source files.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=.build-fuzz
flags=(-O -sanitize=fuzzer,address -parse-as-library)
mkdir -p "$out/request-corpus" "$out/multipart-corpus"
http=Sources/HTTP
parsing=("$http"/Parsing/*.swift "$http"/Messages/HTTPHeaders.swift "$http"/Messages/HTTPMethod.swift
         "$http"/Messages/HTTPStatus.swift)
swiftc "${flags[@]}" fuzz/RequestParserFuzzer.swift "${parsing[@]}" -o "$out/request-parser-fuzzer"
# The multipart parser's errors are HTTPErrors, whose response form pulls in the response
# types and, through them, the Locking module: that one is built first, as a module.
swiftc "${flags[@]}" -module-name Locking -emit-module -emit-module-path "$out/Locking.swiftmodule" \
    -emit-object -o "$out/Locking.o" Sources/Locking/ParkingLock.swift
swiftc "${flags[@]}" -I "$out" fuzz/MultipartParserFuzzer.swift "$http"/Multipart/*.swift "${parsing[@]}" \
    "$http"/Messages/HTTPError.swift "$http"/Messages/JSONText.swift "$http"/Responses/*.swift "$out/Locking.o" \
    -o "$out/multipart-parser-fuzzer"

# Seeds: a few well-formed inputs, prefixed by the split-size byte the harnesses read.
printf '\x05GET /api/posts?limit=5&cursor=a%%2Bb HTTP/1.1\r\nHost: x\r\n\r\n' > "$out/request-corpus/seed-get"
printf '\x03POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello' > "$out/request-corpus/seed-post"
printf '\x07POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;e=1\r\nabc\r\n0\r\nT: 1\r\n\r\n' > "$out/request-corpus/seed-chunked"
printf '\x04--fuzz-boundary\r\nContent-Disposition: form-data; name="title"\r\n\r\nhello\r\n--fuzz-boundary\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n\xff\xd8\xff\r\n--fuzz-boundar\r\n\r\n--fuzz-boundary--\r\n' > "$out/multipart-corpus/seed-form"

"$out/request-parser-fuzzer" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 "$out/request-corpus"
"$out/multipart-parser-fuzzer" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 "$out/multipart-corpus"
