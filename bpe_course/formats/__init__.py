"""Tokenizers in and out of files: GPT-2's, tiktoken's, Hugging Face's and our folders.

- :mod:`.gpt2`: ``vocab.json`` and ``merges.txt``, in GPT-2's byte-to-character spelling
- :mod:`.ranks`: tiktoken's rank tables, and the merges recovered from them
- :mod:`.export`: Hugging Face's ``tokenizer.json`` and tiktoken's rank files, written
- :mod:`.folder`: a trained tokenizer's folder, saved and loaded as one unit
- :mod:`.rankbpe`: tiktoken's rule on a rank table, exactly (Llama 3 and 4, Qwen, Tekken)
- :mod:`.hf_json`: Hugging Face ``tokenizer.json`` files of the byte-level BPE family
- :mod:`.protobuf`: the protocol buffer wire format, read by hand, field by field
- :mod:`.sentencepiece`: SentencePiece BPE ``.model`` files, read by hand (Mistral v1)
- :mod:`.arrays`: a corpus encoded into one ``.npy`` array of ids, as training loops read it
"""
