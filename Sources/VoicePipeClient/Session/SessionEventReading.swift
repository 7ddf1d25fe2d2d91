import VoicePipeSession

/// The events an integrator shows most, read in one step instead of a pattern nested three deep.
extension SessionEvent {
    /// What the session machine noted, when this is a note.
    public var note: SessionNote? {
        if case .note(let note) = self { return note }
        return nil
    }

    /// The state change this event reports, when it is one.
    public var stateChange: (from: SessionState, to: SessionState)? {
        if case .note(.stateChanged(let from, let to)) = self { return (from, to) }
        return nil
    }

    /// The state the session entered, when this event is a state change.
    public var enteredState: SessionState? { stateChange?.to }

    /// The transcript line that settled, when this event is one.
    public var transcriptLine: TranscriptLine? {
        if case .note(.transcript(let line)) = self { return line }
        return nil
    }

    /// Why the session failed, when this event is the session entering `error`.
    public var failure: SessionFailure? {
        if case .error(let failure) = enteredState { return failure }
        return nil
    }
}

extension SessionReport {
    /// Why the session failed, when it ended in `error`.
    public var failure: SessionFailure? {
        if case .error(let failure) = machine.state { return failure }
        return nil
    }
}
