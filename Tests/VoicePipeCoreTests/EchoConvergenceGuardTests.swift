import Testing
import VoicePipeCore

/// The convergence guard, block by block with signals whose levels are known: it attenuates echo
/// the canceller has not yet learned to remove, never the person speaking over it, and nothing
/// once the canceller removes enough.
struct EchoConvergenceGuardTests {
    /// A 10 ms block of a 1 kHz tone at `amplitude`.
    static func tone(_ amplitude: Float, phase: Int = 0) -> [Float] {
        (0..<EchoBlock.frameCount).map { amplitude * Float(Elementary.sin(2 * Double.pi * 1_000 * Double($0 + phase) / 16_000)) }
    }

    static func peak(_ samples: [Float]) -> Float { samples.map(abs).max() ?? 0 }

    /// Runs one block through `stage`: `near` heard, `far` the reference, `output` the canceller's.
    static func apply(_ stage: EchoConvergenceGuard, near: [Float], far: [Float], output: [Float]) -> [Float] {
        var output = output
        near.withUnsafeBufferPointer { near in
            far.withUnsafeBufferPointer { far in
                output.withUnsafeMutableBufferPointer { stage.apply(near: near, far: far, output: $0) }
            }
        }
        return output
    }

    @Test func echoTheCancellerStillLetsThroughIsTakenDown30dBAfterTheFirstRamp() {
        let guardStage = EchoConvergenceGuard()
        let far = Self.tone(0.5), echo = Self.tone(0.2)
        // The canceller removes only 6 dB: far from converged.
        let first = Self.apply(guardStage, near: echo, far: far, output: echo.map { $0 / 2 })
        let second = Self.apply(guardStage, near: echo, far: far, output: echo.map { $0 / 2 })
        #expect(Self.peak(first) <= Self.peak(echo.map { $0 / 2 }))
        let attenuation = 20 * Elementary.log10(Double(Self.peak(echo.map { $0 / 2 }) / Self.peak(second)))
        #expect(abs(attenuation - 30) < 0.1, "\(attenuation) dB")
        #expect(guardStage.blocksAttenuated == 2)
        #expect(guardStage.convergedAfterBlocks == nil)
    }

    @Test func thePersonSpeakingLouderThanTheReferenceIsNeverTouched() {
        let guardStage = EchoConvergenceGuard()
        let far = Self.tone(0.1), person = Self.tone(0.5, phase: 3)
        for _ in 0..<10 {
            let output = Self.apply(guardStage, near: person, far: far, output: person)
            #expect(output == person)
        }
        #expect(guardStage.blocksAttenuated == 0)
    }

    @Test func withoutAReferenceNothingIsGuarded() {
        let guardStage = EchoConvergenceGuard()
        let quiet = [Float](repeating: 0, count: EchoBlock.frameCount), sound = Self.tone(0.3)
        #expect(Self.apply(guardStage, near: sound, far: quiet, output: sound) == sound)
        #expect(guardStage.singleTalkBlocks == 0)
    }

    @Test func onceTheCancellerRemovesEnoughTheGuardStandsAsideAndAPersonLouderThanTheEchoPasses() {
        let guardStage = EchoConvergenceGuard()
        let far = Self.tone(0.5), echo = Self.tone(0.2)
        // A canceller that removes 50 dB: converged at the first single-talk block, and over 4 s
        // the echo path's gain (0.2 against 0.5) learnt: it comes down from 0 dB by 0.5 % a block.
        let cleaned = echo.map { $0 / 316.2 }
        for _ in 0..<400 { #expect(Self.apply(guardStage, near: echo, far: far, output: cleaned) == cleaned) }
        #expect(guardStage.convergedAfterBlocks == 1)
        #expect(guardStage.blocksAttenuated == 0)
        // A person louder than the echo speaks over the reply: above what the learnt path makes of
        // the reference plus 6 dB, so double talk, untouched.
        let person = Self.tone(0.5, phase: 16)
        let near = zip(echo, person).map { $0 + $1 }, output = zip(cleaned, person).map { $0 + $1 }
        for _ in 0..<30 { #expect(Self.apply(guardStage, near: near, far: far, output: output) == output) }
        #expect(guardStage.blocksAttenuated == 0)
    }

    @Test func aBurstOfEchoTheConvergedCancellerLetsThroughIsHeldBackInItsOwnBlock() {
        let guardStage = EchoConvergenceGuard()
        let far = Self.tone(0.5), echo = Self.tone(0.2)
        for _ in 0..<30 { _ = Self.apply(guardStage, near: echo, far: far, output: echo.map { $0 / 316.2 }) }
        // One block where the canceller removes only 30 dB (sound it has not learnt, or a loud echo).
        let burst = echo.map { $0 / 31.62 }
        _ = Self.apply(guardStage, near: echo, far: far, output: burst)
        let next = Self.apply(guardStage, near: echo, far: far, output: burst)
        let attenuation = 20 * Elementary.log10(Double(Self.peak(burst) / Self.peak(next)))
        #expect(abs(attenuation - 30) < 0.1, "\(attenuation) dB")
        #expect(guardStage.blocksAttenuated == 2)
    }
}
