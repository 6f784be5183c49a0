/// The words demo content is made of: enough variety that a feed of seeded posts looks
/// like one when an app's screens are tried against it.
enum DemoText {
    static let firstNames = ["Ada", "Blair", "Casey", "Dana", "Eli", "Farah", "Gus", "Hana", "Ivo", "June",
                             "Kai", "Lena", "Milo", "Nora", "Omar", "Pia", "Quinn", "Rosa", "Sami", "Tess"]
    static let lastNames = ["Demo", "Sample", "Example", "Tester", "Preview"]
    static let topics = ["sourdough at altitude", "night trains", "tiny gardens", "the best sunset spot",
                         "learning the cello", "rainy day museums", "bike commuting", "a found recipe",
                         "street photography", "hiking with kids", "moving cities", "home coffee roasting",
                         "second-hand books", "the first snow", "building a shed", "a weekend by the sea"]
    /// Each topic's hashtag, in `topics`' order: seeded posts carry them, so tag pages,
    /// trending and search have something to show.
    static let topicTags = ["sourdough", "nighttrains", "gardening", "sunsets", "cello", "museums", "bikecommute",
                            "recipes", "streetphotography", "hiking", "moving", "coffee", "books", "snow", "diy", "seaside"]
    static let summaries = ["A few notes from this week", "What worked and what did not", "Photos inside",
                            "Longer than I meant it to be", "Asking for advice", "A small win"]
    static let bodies = [
        "Started small, kept at it, and it finally clicked. Happy to share details if anyone is curious.",
        "Three things I wish I had known before: plan less, pack lighter, and ask locals.",
        "Not sure this is the right way to do it, but it has been working for a month now.",
        "Posting this mostly as a reminder to myself. Comments welcome.",
        "The short version: worth it. The long version is below, with the mistakes included.",
    ]
    static let comments = ["Love this!", "Saving this for later.", "Great tip, thanks.", "Where was this?",
                           "Same here, it took me ages.", "Following for updates.", "This made my day."]
    static let places = ["Lisbon", "Kyoto", "Montréal", "Cape Town", "Oslo", "Valparaíso", "Tbilisi"]
}
