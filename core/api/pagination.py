from rest_framework.pagination import PageNumberPagination


class LinkPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"]["minimum"] = 1
            if parameter["name"] == self.page_size_query_param:
                parameter["description"] = (
                    f"Links per page: {self.page_size} unless given, larger values are capped "
                    f"at {self.max_page_size}."
                )
        return parameters

    def get_paginated_response_schema(self, schema):
        paginated = super().get_paginated_response_schema(schema)
        properties = paginated["properties"]
        properties["count"]["example"] = 120
        properties["next"]["example"] = "https://s.example.com/api/v1/links/?page=3"
        properties["previous"]["example"] = "https://s.example.com/api/v1/links/?page=1"
        return paginated
