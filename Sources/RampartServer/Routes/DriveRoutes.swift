import Hummingbird
import RampartAPI

/// Drive volume, opaque encrypted blocks, nodes and revisions.
///
/// Trust-model rows **encrypted file blocks (low)** and **database (nodes, revisions, blocks)**:
/// blocks and node names arrive encrypted by the client and are stored opaque; every access is
/// scoped by the session's user id (behind ``SessionMiddleware``).
struct DriveRoutes: SessionRoutes {
    let backend: Backend

    func add(to routes: RouteCollection<APIRequestContext>) {
        let drive = backend.drive

        routes.get(RouterPath(APIRoute.driveVolume)) { _, context in
            try APIIO.json(try drive.volume(userID: try context.session.userID))
        }
        routes.post(RouterPath(APIRoute.driveBlocks)) { request, context in
            let session = try context.session
            let data = try await APIIO.body(request, limit: DriveStorage.maximumBlockSize)
            return try APIIO.json(try drive.storeBlock(userID: session.userID, data: data))
        }
        routes.get(RouterPath(APIRoute.driveBlock(":id"))) { _, context in
            APIIO.binary(try drive.block(userID: try context.session.userID, id: try context.parameters.require("id")))
        }
        routes.post(RouterPath(APIRoute.driveNodes)) { request, context in
            let session = try context.session
            let node = try await APIIO.decode(DriveNodeRequest.self, from: request)
            return try APIIO.json(try drive.createNode(userID: session.userID, node))
        }
        routes.get(RouterPath(APIRoute.driveNodes)) { request, context in
            try APIIO.json(try drive.list(userID: try context.session.userID, parent: request.uri.queryParameters.get("parent")))
        }
        routes.get(RouterPath(APIRoute.driveNode(":id"))) { _, context in
            try APIIO.json(try drive.node(userID: try context.session.userID, id: try context.parameters.require("id")))
        }
        routes.put(RouterPath(APIRoute.driveNode(":id"))) { request, context in
            let session = try context.session
            let node = try await APIIO.decode(DriveNodeRequest.self, from: request)
            return try APIIO.json(try drive.updateNode(userID: session.userID, id: try context.parameters.require("id"), node))
        }
        routes.delete(RouterPath(APIRoute.driveNode(":id"))) { _, context in
            try drive.delete(userID: try context.session.userID, id: try context.parameters.require("id"))
            return try APIIO.json(OKResponse())
        }
        routes.get(RouterPath(APIRoute.driveRevisions(":id"))) { _, context in
            try APIIO.json(try drive.revisions(userID: try context.session.userID, nodeID: try context.parameters.require("id")))
        }
    }
}
