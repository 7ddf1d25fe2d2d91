import VoicePipeCore

/// A small command-line parser in the shape of swift-argument-parser: declared options,
/// `--name value` or `--name=value`, flags, positionals, `--` to end options.
struct Arguments {
    /// An option that takes a value.
    struct Option {
        let name: String
        let valueName: String
        let help: String
        /// Whether the option may be given more than once (each value is kept, in order).
        var repeatable = false
    }

    /// An option without a value.
    struct Flag {
        let name: String
        let help: String
    }

    private(set) var positionals: [String] = []
    private var values: [String: String] = [:]
    private var repeated: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Parses `arguments` against the declared options and flags.
    /// - Throws: a usage ``CommandFailure`` for an unknown option, a missing value or a repeated option.
    init(_ arguments: [String], command: String, options: [Option], flags declaredFlags: [Flag]) throws(CommandFailure) {
        let optionNames = Set(options.map(\.name))
        let repeatableNames = Set(options.filter(\.repeatable).map(\.name))
        let flagNames = Set(declaredFlags.map(\.name) + ["help"])
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument == "-h" {
                flags.insert("help")
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
            if flagNames.contains(name) {
                guard inlineValue == nil else { throw .usage("'--\(name)' takes no value", command: command) }
                flags.insert(name)
            } else if optionNames.contains(name) {
                guard values[name] == nil || repeatableNames.contains(name) else { throw .usage("'--\(name)' is given twice", command: command) }
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw .usage("'--\(name)' needs a value", command: command) }
                    value = arguments[index]
                    index += 1
                }
                values[name] = value
                repeated[name, default: []].append(value)
            } else {
                throw .usage("unknown option '--\(name)'", command: command)
            }
        }
    }

    /// Whether a flag was given.
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// The raw value of an option, if given (the last one, for a repeatable option).
    func value(_ name: String) -> String? { values[name] }

    /// Every value given to a repeatable option, in order.
    func values(_ name: String) -> [String] { repeated[name] ?? [] }

    /// An integer option within `range`, or `defaultValue` when absent.
    func integer(_ name: String, in range: ClosedRange<Int>, default defaultValue: Int, command: String) throws(CommandFailure) -> Int {
        guard let text = values[name] else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw .usage("'--\(name)' must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'", command: command)
        }
        return value
    }

    /// `--chunk-ms` (10–100, default 32) and `--channel` (a channel instead of the average), as
    /// capture options; shared by the commands that run the capture converter.
    func captureOptions(command: String) throws(CommandFailure) -> CaptureOptions {
        let milliseconds = try integer("chunk-ms", in: 10...100, default: 32, command: command)
        var downmix = DownmixMode.average
        if value("channel") != nil {
            downmix = .channel(try integer("channel", in: 0...1023, default: 0, command: command))
        }
        return CaptureOptions(frameMilliseconds: milliseconds, downmix: downmix)
    }

    /// A decimal option within `range`, or `nil` when absent.
    func decimal(_ name: String, in range: ClosedRange<Double>, command: String) throws(CommandFailure) -> Double? {
        guard let text = values[name] else { return nil }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw .usage("'--\(name)' must be a number from \(Self.plain(range.lowerBound)) to \(Self.plain(range.upperBound)), not '\(text)'", command: command)
        }
        return value
    }

    private static func plain(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// One of `choices`, or `defaultValue` when absent.
    func choice(_ name: String, of choices: [String], default defaultValue: String, command: String) throws(CommandFailure) -> String {
        guard let text = values[name] else { return defaultValue }
        guard choices.contains(text) else {
            throw .usage("'--\(name)' must be one of \(choices.joined(separator: ", ")), not '\(text)'", command: command)
        }
        return text
    }

    /// One or more positionals (all of them), named for the error message.
    func positionals(atLeast name: String, command: String) throws(CommandFailure) -> [String] {
        guard !positionals.isEmpty else { throw .usage("missing <\(name)>", command: command) }
        return positionals
    }

    /// Exactly `count` positionals, named for the error message.
    func positionals(exactly names: [String], command: String) throws(CommandFailure) -> [String] {
        if positionals.count < names.count {
            throw .usage("missing <\(names[positionals.count])>", command: command)
        }
        if positionals.count > names.count {
            throw .usage("unexpected argument '\(positionals[names.count])'", command: command)
        }
        return positionals
    }

    /// Help text for a command: overview, usage, discussion, options (their help wrapped to fit
    /// 100 columns), examples and the exit statuses.
    static func help(usage: String, abstract: String, discussion: String? = nil, examples: [String], options: [Option], flags: [Flag]) -> String {
        var lines = ["OVERVIEW: \(abstract)", "", "USAGE: \(usage)"]
        if let discussion {
            // Paragraphs are reflowed to 100 columns, whatever was interpolated into them.
            for paragraph in discussion.components(separatedBy: "\n\n") {
                lines += [""] + wrap(paragraph.split(separator: "\n").joined(separator: " "), width: 100)
            }
        }
        lines += ["", "OPTIONS:"]
        let rows = options.map { ("--\($0.name) <\($0.valueName)>", $0.help) } + flags.map { ("--\($0.name)", $0.help) } + [("-h, --help", "Show help information.")]
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
