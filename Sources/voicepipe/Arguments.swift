import VoicePipeCore

/// How an option's text becomes a typed value. A refusal is a usage failure that names the option
/// by the flag it was declared with, so no message spells the flag a second time.
struct OptionValue<Value> {
    /// Reads `text`, given to `flag` ("--chunk-ms") of `command`.
    let parse: (_ text: String, _ flag: String, _ command: String) throws(CommandFailure) -> Value
}

extension OptionValue where Value == String {
    /// The text as given.
    static var text: Self { Self { text, _, _ in text } }
}

extension OptionValue where Value == Int {
    /// A whole number within `range`.
    static func integer(in range: ClosedRange<Int>) -> Self {
        Self { text, flag, command throws(CommandFailure) in
            guard let value = Int(text), range.contains(value) else {
                throw .usage("'\(flag)' must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'", command: command)
            }
            return value
        }
    }
}

extension OptionValue where Value == Double {
    /// A finite decimal within `range`.
    static func decimal(in range: ClosedRange<Double>) -> Self {
        Self { text, flag, command throws(CommandFailure) in
            guard let value = Double(text), value.isFinite, range.contains(value) else {
                throw .usage("'\(flag)' must be a number from \(plain(range.lowerBound)) to \(plain(range.upperBound)), not '\(text)'", command: command)
            }
            return value
        }
    }

    private static func plain(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

extension OptionValue where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// One of the type's cases, by raw value.
    static var choice: Self {
        Self { text, flag, command throws(CommandFailure) in
            guard let value = Value(rawValue: text) else {
                throw .usage("'\(flag)' must be one of \(Value.allCases.map(\.rawValue).joined(separator: ", ")), not '\(text)'", command: command)
            }
            return value
        }
    }
}

/// One command-line option bound to a field of a command's options: its name, its line in
/// `--help` and how its text is read, declared once, so parsing, help and the field agree.
struct OptionBinding<Options> {
    /// The name without dashes ("chunk-ms").
    let name: String
    /// The value's placeholder in help ("ms"); nil for a flag, which takes no value.
    let valueName: String?
    let help: String
    /// Whether the option may be given more than once (each value is kept, in order).
    let repeatable: Bool
    /// Stores one given value (the empty string for a flag) into the options.
    fileprivate let assign: (inout Options, String, _ command: String) throws(CommandFailure) -> Void
    /// Options this one only means something with, in the order they are checked, each with the
    /// sentence that follows the flag when it is missing ("applies to a signed handshake: …").
    fileprivate var requirements: [(options: [String], sentence: String)] = []

    /// The option as a user types it, for messages: "--chunk-ms".
    var flag: String { "--" + name }

    /// An option with a value, read by `value` into an optional field (nil when not given).
    static func option<Value>(_ name: String, _ valueName: String, _ field: WritableKeyPath<Options, Value?>, _ value: OptionValue<Value>, help: String) -> Self {
        Self(name: name, valueName: valueName, help: help, repeatable: false,
             assign: { options, text, command throws(CommandFailure) in options[keyPath: field] = try value.parse(text, "--" + name, command) })
    }

    /// An option that may be repeated, each value read by `value` and appended to the field.
    static func repeated<Value>(_ name: String, _ valueName: String, _ field: WritableKeyPath<Options, [Value]>, _ value: OptionValue<Value>, help: String) -> Self {
        Self(name: name, valueName: valueName, help: help, repeatable: true,
             assign: { options, text, command throws(CommandFailure) in options[keyPath: field].append(try value.parse(text, "--" + name, command)) })
    }

    /// A flag: the field becomes true when it is given.
    static func flag(_ name: String, _ field: WritableKeyPath<Options, Bool>, help: String) -> Self {
        Self(name: name, valueName: nil, help: help, repeatable: false,
             assign: { options, _, _ in options[keyPath: field] = true })
    }

    /// The same option, refused unless `other` is given too: "'<flag>' `sentence`". Checked
    /// before any value is read, so the missing option is what the user hears about first.
    func requiring<Other>(_ other: OptionBinding<Other>, _ sentence: String) -> Self {
        var binding = self
        binding.requirements.append(([other.name], sentence))
        return binding
    }

    /// The same option, refused unless one of `others` is given too (a WebSocket option needs
    /// `--url` or `--agentcore-runtime`).
    func requiring<Other>(anyOf others: [OptionBinding<Other>], _ sentence: String) -> Self {
        var binding = self
        binding.requirements.append((others.map(\.name), sentence))
        return binding
    }

    /// The same option bound into a group of options held at `path` of a command's options.
    func within<Outer>(_ path: WritableKeyPath<Outer, Options>) -> OptionBinding<Outer> {
        let assign = self.assign
        return OptionBinding<Outer>(name: name, valueName: valueName, help: help, repeatable: repeatable,
                                    assign: { outer, text, command throws(CommandFailure) in try assign(&outer[keyPath: path], text, command) },
                                    requirements: requirements)
    }
}

extension Array {
    /// Every binding of a group, bound into the group held at `path`.
    func within<Group, Outer>(_ path: WritableKeyPath<Outer, Group>) -> [OptionBinding<Outer>] where Element == OptionBinding<Group> {
        map { $0.within(path) }
    }
}

/// A command's options as typed fields, starting from their defaults, with one binding per option.
protocol CommandOptions {
    init()
    /// The options in the order `--help` lists them (those with values first, then the flags).
    static var bindings: [OptionBinding<Self>] { get }
}

/// A command line after the command's name: the typed options and the positionals.
struct ParsedArguments<Options: CommandOptions> {
    private(set) var options = Options()
    private(set) var positionals: [String] = []
    /// Whether `-h` or `--help` was given: the command then prints its help and does nothing else.
    private(set) var wantsHelp = false

    /// Parses `arguments` against `Options.bindings`: `--name value` or `--name=value`, flags,
    /// positionals, `-` as a positional and `--` to end options. The whole line is checked for
    /// unknown, repeated and valueless options first, then for options given without one they
    /// require; values are then read in declaration order (help wins over a bad value).
    /// - Throws: a usage ``CommandFailure`` for an unknown option, a missing value, a repeated
    ///   option, an option without one it requires, or a value its binding refuses.
    init(_ arguments: [String], command: String) throws(CommandFailure) {
        let bindings = Options.bindings
        var index = [String: Int]()
        for (position, binding) in bindings.enumerated() { index[binding.name] = position }
        var given = [[String]](repeating: [], count: bindings.count)
        var cursor = 0
        var onlyPositionals = false
        while cursor < arguments.count {
            let argument = arguments[cursor]
            cursor += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument == "-h" {
                wantsHelp = true
                continue
            }
            guard argument.hasPrefix("--") else {
                throw .usage("unknown option '\(argument)'", command: command)
            }
            let body = argument.dropFirst(2)
            let name: String
            var inlineValue: String?
            if let equals = body.firstIndex(of: "=") {
                name = String(body[..<equals])
                inlineValue = String(body[body.index(after: equals)...])
            } else {
                name = String(body)
            }
            if name == "help" {
                guard inlineValue == nil else { throw .usage("'--help' takes no value", command: command) }
                wantsHelp = true
                continue
            }
            guard let position = index[name] else { throw .usage("unknown option '--\(name)'", command: command) }
            let binding = bindings[position]
            guard binding.valueName != nil else {
                guard inlineValue == nil else { throw .usage("'--\(name)' takes no value", command: command) }
                given[position] = [""]
                continue
            }
            guard given[position].isEmpty || binding.repeatable else { throw .usage("'--\(name)' is given twice", command: command) }
            if let inlineValue {
                given[position].append(inlineValue)
            } else {
                guard cursor < arguments.count else { throw .usage("'--\(name)' needs a value", command: command) }
                given[position].append(arguments[cursor])
                cursor += 1
            }
        }
        guard !wantsHelp else { return }
        for (binding, values) in zip(bindings, given) where !values.isEmpty {
            for requirement in binding.requirements where requirement.options.allSatisfy({ index[$0].map { given[$0].isEmpty } ?? true }) {
                throw .usage("'\(binding.flag)' \(requirement.sentence)", command: command)
            }
        }
        for (binding, values) in zip(bindings, given) {
            for value in values { try binding.assign(&options, value, command) }
        }
    }
}

/// Positionals checked against what a command expects, named for the error message.
enum Positionals {
    /// One or more positionals (all of them).
    static func atLeastOne(_ positionals: [String], named name: String, command: String) throws(CommandFailure) -> [String] {
        guard !positionals.isEmpty else { throw .usage("missing <\(name)>", command: command) }
        return positionals
    }

    /// Exactly one positional per name in `names`.
    static func exactly(_ positionals: [String], named names: [String], command: String) throws(CommandFailure) -> [String] {
        if positionals.count < names.count {
            throw .usage("missing <\(names[positionals.count])>", command: command)
        }
        if positionals.count > names.count {
            throw .usage("unexpected argument '\(positionals[names.count])'", command: command)
        }
        return positionals
    }
}

/// A command's `--help`, its options listed from the same bindings the parser reads.
enum HelpText {
    /// Overview, usage, discussion, options (their help wrapped to fit 100 columns), examples and
    /// the exit statuses.
    static func make<Options>(usage: String, abstract: String, discussion: String? = nil, examples: [String], bindings: [OptionBinding<Options>]) -> String {
        var lines = ["OVERVIEW: \(abstract)", "", "USAGE: \(usage)"]
        if let discussion {
            // Paragraphs are reflowed to 100 columns, whatever was interpolated into them.
            for paragraph in discussion.components(separatedBy: "\n\n") {
                lines += [""] + wrap(paragraph.split(separator: "\n").joined(separator: " "), width: 100)
            }
        }
        lines += ["", "OPTIONS:"]
        let values = bindings.compactMap { binding in binding.valueName.map { ("\(binding.flag) <\($0)>", binding.help) } }
        let flags = bindings.filter { $0.valueName == nil }.map { ($0.flag, $0.help) }
        let rows = values + flags + [("-h, --help", "Show help information.")]
        let width = (rows.map(\.0.count).max() ?? 0) + 2
        for (left, right) in rows {
            let wrapped = wrap(right, width: 100 - 2 - width)
            lines.append("  " + left + String(repeating: " ", count: width - left.count) + (wrapped.first ?? ""))
            lines += wrapped.dropFirst().map { String(repeating: " ", count: 2 + width) + $0 }
        }
        lines += ["", "EXAMPLES:"] + examples.map { "  " + $0 }
        lines += ["", "EXIT STATUS:"] + ExitCode.help.map { "  " + $0 }
        return lines.joined(separator: "\n")
    }

    /// `text` in lines of at most `width` characters, broken between words.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines = [String]()
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
