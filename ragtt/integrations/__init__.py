"""ragtt inside the RAG frameworks people already use.

- ``ragtt.integrations.langchain``: ``RagttRetriever`` (a ``langchain_core`` retriever) and
  ``ingest_documents`` for LangChain ``Document``s (``pip install 'ragtt[langchain]'``).
- ``ragtt.integrations.llama_index``: the same for LlamaIndex (``pip install 'ragtt[llama-index]'``).

Every retrieval is a logged ragtt query, and each returned document carries its
``query_id`` in its metadata, so any answer a chain gave can be replayed with
``proj.replay(query_id)``. This package imports neither framework; only its submodules do.
"""
