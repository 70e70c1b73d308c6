extension Duration {
    /// The duration in seconds as a `Double`, the benches' one conversion (× 1000 for
    /// milliseconds, × 1e6 for microseconds).
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
