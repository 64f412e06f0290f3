"""The speed machinery: the same answers as the teaching core, in a fraction of the time.

Nothing here changes a result. Each module is one idea that the core reaches through one
named object, and each is tested against the plain loop it replaces:

- :mod:`.workers`: how worker processes start, show progress and are run
- :mod:`.cachefiles`: values derived once, kept in checked files for the next process
- :mod:`.fastsplit`: the same pretokens, found by the standard library's faster ``re``
- :mod:`.cuts`: places where a split pattern never joins two neighbours, with proofs
- :mod:`.counting`: counting the pretokens of a big corpus in chunks, in parallel
- :mod:`.wordtable`: the trainer's words, and the pairs a merge touches
- :mod:`.sharing`: the first, heaviest merges shared with helper processes
- :mod:`.merging`: applying merges inside one pretoken in close to linear time
- :mod:`.piececache`: most pretokens answered by one dictionary lookup
- :mod:`.batches`: encoding a batch of texts on several cores
- :mod:`.streaming`: encoding a stream as it arrives
- :mod:`.startcache`: what a tokenizer file makes, derived once and read back at start-up
"""
