import ArgumentParser
import Foundation
import Logging
import PostsServer

@main
struct PostsServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "posts-server",
        abstract: "An HTTP backend for social apps: posts in a tree, likes, comments, email-code login.",
        version: ServerVersion.current,
        subcommands: [Serve.self, Migrate.self, Dev.self, Role.self, Storage.self]
    )
}
