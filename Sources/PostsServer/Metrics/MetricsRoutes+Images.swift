/// The image pipeline's part of `/metrics` (API.md "Images for phones"), this instance's.
extension MetricsRoutes {
    static func addImages(to metrics: inout MetricsText, counters: ImageCounters.Snapshot) {
        metrics.add("images_processed_total", .counter, help: "Uploaded images (post images and avatars) made and kept.",
                    value: counters.processed)
        metrics.add("images_unreadable_total", .counter, help: "Uploads refused as not a readable image (415).",
                    value: counters.unreadable)
        metrics.add("images_too_large_total", .counter, help: "Uploads refused by their header as too large to decode (422).",
                    value: counters.tooLarge)
        metrics.add("image_sizes_made_total", .counter, help: "Image sizes (?width=N) made on a first request.",
                    value: counters.sizesMade)
    }
}
