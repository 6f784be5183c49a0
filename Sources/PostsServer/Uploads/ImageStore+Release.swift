/// API.md: a stored image goes once nothing names it. Migration 0016's triggers queue the
/// URL a commit dropped (`storage_deletions`); the deletion worker checks that no post or
/// profile still names it and deletes the image and its sizes, now or, while the store is
/// down, later. Callers say a commit dropped some, so the worker does not wait for its poll.
extension ImageStore {
    func release(_ urls: [String?]) {
        guard urls.contains(where: { StoredImageName(url: $0) != nil }) else { return }
        deletions.wake()
    }
}
