// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "posts-server",
    platforms: [.macOS(.v15), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .executable(name: "posts-server", targets: ["posts-server"]),
        // For the apps that use the server: Foundation only, no server code.
        .library(name: "PostsClient", targets: ["PostsClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // HMAC-SHA256 of push webhook bodies (X-Posts-Signature): outside SQL, and not ours to write.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            // Homebrew's libpq (or postgresql@16) is keg-only: scripts/system-packages.sh
            // puts its pkgconfig folder on PKG_CONFIG_PATH.
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // libcurl, for the mailer's SMTP (STARTTLS, implicit TLS, AUTH, certificate checks):
        // the protocol is libcurl's, never ours. shim.h adds typed wrappers of its variadic
        // setopt/getinfo, which Swift cannot call.
        .systemLibrary(
            name: "CLibCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        // zlib, for gzip of JSON answers (Debian zlib1g-dev; macOS ships it with the SDK).
        // shim.h wraps deflateInit2/inflateInit2, which are macros Swift cannot call.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // libvips, for the image pipeline (decoding with shrink-on-load and streaming, the
        // five loaders of the accepted formats and nothing else). Its API is variadic: the
        // CVips target wraps the calls the pipeline makes as plain C functions.
        .systemLibrary(
            name: "CLibVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"]), .brew(["vips"])]
        ),
        // libwebpmux (a dependency of libvips) takes the EXIF out of WebP files.
        .target(name: "CVips", dependencies: ["CLibVips", "CLinux"],
                linkerSettings: [.linkedLibrary("webpmux"), .linkedLibrary("webp")]),
        // Uploaded images made safe and small: header checks, orientation, sRGB, no
        // metadata, sizes and avatars. Knows nothing of HTTP or PostgreSQL.
        .target(name: "Images", dependencies: ["CVips"]),
        // The system calls that differ between Linux and Darwin (epoll and eventfd, accept4,
        // pipe2, sendfile, closefrom for posix_spawn), each behind one name for both.
        .target(name: "CLinux"),
        // The lock both layers use where many threads meet.
        .target(name: "Locking"),
        // HTTP/1.1 on sockets and epoll or Dispatch sources; knows nothing of PostgreSQL.
        .target(
            name: "HTTP",
            dependencies: ["CLinux", "CZlib", "Locking", .product(name: "Logging", package: "swift-log")]
        ),
        // libpq wrapper, pool, migrations, local clusters; knows nothing of HTTP.
        .target(
            name: "Postgres",
            dependencies: ["CLibPQ", "CLinux", "Locking", .product(name: "Logging", package: "swift-log")]
        ),
        // The application: configuration, services, routes; sees both layers.
        .target(
            name: "PostsServer",
            dependencies: ["CLibCurl", "HTTP", "Images", "Postgres", "Locking", .product(name: "Logging", package: "swift-log"),
                           .product(name: "Crypto", package: "swift-crypto"),
                           // RS256 ID tokens (Sign in with Apple, Google): RSA public keys.
                           .product(name: "_CryptoExtras", package: "swift-crypto")],
            resources: [.embedInCode("OpenAPI/openapi.yaml")]
        ),
        // The Swift client of the API (models, async calls, pages and events as sequences).
        .target(name: "PostsClient"),
        .executableTarget(
            name: "posts-server",
            dependencies: [
                "CLinux",
                "PostsServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "TestSupport",
            dependencies: ["CLinux", "CZlib", "HTTP", "Images", "Postgres", "PostsServer",
                           .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "_CryptoExtras", package: "swift-crypto")],
            path: "Tests/TestSupport",
            // The SMTP relay of the mail tests (SMTPRelay.swift), the image tests' fixtures and
            // their probe (ImageFixtures.swift), and the console's browser flows
            // (ConsoleBrowserTests), run with the venv's python.
            exclude: ["smtp_relay.py", "image_fixtures.py", "image_probe.py", "console_flows.py", "push_services.py",
                      "activitypub_peer.py"]
        ),
        .testTarget(name: "ImagesTests", dependencies: ["Images", "TestSupport"]),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "TestSupport"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport"]),
        .testTarget(name: "PostsServerTests", dependencies: ["PostsServer", "TestSupport", "posts-server",
                                                            .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(name: "PostsClientTests", dependencies: ["PostsClient", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
